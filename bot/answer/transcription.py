"""Transcribing hours of audio with Whisper: how long it takes at published speeds, said as measured runs.

Transcription speed is not modelled from the hardware: it depends on the implementation and on batching far more
than on the card (the same A100 transcribed Whisper large-v3 at 16x and at 92x real time). Asked to transcribe
a number of hours ("1000 hours of audio with Whisper"), the card opens with what each published run would take
for that much audio, each with its GPU and setup, and says that the speed below it is not a transcription time.

Published runs (time to transcribe a fixed recording; real-time factor = audio length / time):
- insanely-fast-whisper README (github.com/Vaibhavs10/insanely-fast-whisper, commit 0108ed7), 150 minutes of
  audio, Whisper large-v3 on an A100 80GB: Transformers FP16 with batches of 24 and Flash Attention 2 in 1 min
  38 s (91.8x); faster-whisper FP16 with beam size 1 in 9 min 23 s (16.0x).
- faster-whisper README (github.com/SYSTRAN/faster-whisper, commit 00cc7e1), 13 minutes of audio, Whisper
  large-v2 on a Tesla V100S: faster-whisper FP16 beam size 5 in 54 s (14.4x); openai/whisper FP16 beam size 5
  in 4 min 30 s (2.9x).
"""

from __future__ import annotations

from dataclasses import dataclass

from rules.types import Workload


@dataclass(frozen=True, slots=True)
class PublishedRun:
    gpu: str
    model: str
    setup: str  # implementation and settings, in the engines' own words (not translated)
    audio_s: float
    took_s: float
    source: str

    @property
    def realtime(self) -> float:
        return self.audio_s / self.took_s


RUNS = (
    PublishedRun("A100 80GB", "large-v3", "Transformers, FP16, batch 24, Flash Attention 2", 150 * 60, 98,
                 "github.com/Vaibhavs10/insanely-fast-whisper README"),
    PublishedRun("A100 80GB", "large-v3", "faster-whisper, FP16, beam 1", 150 * 60, 9 * 60 + 23,
                 "github.com/Vaibhavs10/insanely-fast-whisper README"),
    PublishedRun("Tesla V100S", "large-v2", "faster-whisper, FP16, beam 5", 13 * 60, 54,
                 "github.com/SYSTRAN/faster-whisper README"),
    PublishedRun("Tesla V100S", "large-v2", "openai/whisper, FP16, beam 5", 13 * 60, 4 * 60 + 30,
                 "github.com/SYSTRAN/faster-whisper README"),
)


def transcription_section(workload: Workload, audio_hours: float, lang: str) -> str:
    """The section's mrkdwn in `lang`: each published run's time for `audio_hours` of audio."""
    from bot.render.cards import language_tools

    messages, f = language_tools(lang)
    large = workload.model is not None and "large" in workload.model.id
    lines = [messages.text("trans.head", hours=f.number(audio_hours, 1 if audio_hours < 10 else 0),
                           model=workload.model.name if workload.model is not None else "Whisper")]
    for run in RUNS:
        lines.append(messages.text("trans.run", time=f.hours(audio_hours / run.realtime), gpu=run.gpu,
                                   realtime=f.fixed(run.realtime, 0 if run.realtime >= 10 else 1),
                                   model=f"Whisper {run.model}", setup=run.setup))
    tail = "trans.tail" if large else "trans.tail_smaller"  # both listed in bot/locales/keys.py
    lines.append(messages.text(tail))
    return "\n".join(lines)
