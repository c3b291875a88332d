"""Understanding requests: free text in eight languages -> `Ask` (DESIGN §4)."""

from bot.parse.ask import (
    Ask,
    Budget,
    GpuMention,
    ModelMention,
    ask_to_dict,
    ask_to_workload,
)
from bot.parse.parser import parse

__all__ = [
    "Ask",
    "Budget",
    "GpuMention",
    "ModelMention",
    "ask_to_dict",
    "ask_to_workload",
    "parse",
]
