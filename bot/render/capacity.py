"""The capacity card's localized pieces: the largest model the named hardware holds, a row per model, buttons.

Everything decided arrives in the view's rows (bot.answer.capacity: the engine's running verdict per model);
these functions only word it.
"""

from __future__ import annotations

from bot.render.filters import format_table
from bot.render.findings import precision_label
from bot.render.formats import Formatter
from bot.render.serving import tokens_rate
from bot.render.views import CapacityRow, CapacityView

MARKS = {"fits": "✓", "offload": "⚠", "no": "✗"}
BUTTONS = 3  # the largest model that fits, and the next ones up: where the card's limit is


def _state(row: CapacityRow) -> str:
    if row.fits:
        return "fits"
    return "offload" if row.offload_gib > 0 and row.tokens_per_s is not None else "no"


def largest(view: CapacityView) -> CapacityRow | None:
    """The largest model (by parameters) that fits in the GPUs' memory."""
    fitting = [r for r in view.rows if r.fits]
    return max(fitting, key=lambda r: r.params_b) if fitting else None


def headline(view: CapacityView, f: Formatter) -> str:
    """The answer first: the largest model it holds, else the smallest model's shortfall; then the first model
    beyond it that runs only with CPU offload, and how slowly."""
    best = largest(view)
    lines = []
    if best is not None:
        lines.append(f.messages.text("cap.largest", model=best.model, precision=precision_label(best.precision, f),
                                     needed=f.gib(best.needed_gib), has=f.gib(best.has_gib),
                                     rate=tokens_rate(best.tokens_per_s or 0.0, f)))
    elif view.rows:
        smallest = min(view.rows, key=lambda r: r.params_b)
        lines.append(f.messages.text("cap.none", model=smallest.model,
                                     precision=precision_label(smallest.precision, f),
                                     needed=f.gib(smallest.needed_gib), has=f.gib(smallest.has_gib)))
    bigger = [r for r in view.rows if best is None or r.params_b > best.params_b]
    offload = next((r for r in bigger if _state(r) == "offload"), None)
    if offload is not None:
        lines.append(f.messages.text("cap.offload", model=offload.model, offload=f.gib(offload.offload_gib),
                                     rate=tokens_rate(offload.tokens_per_s or 0.0, f)))
    return "\n".join(lines)


def table(view: CapacityView, f: Formatter) -> str:
    """Model · ✓/⚠/✗ · precision · needed / usable per GPU · tokens/s for one user."""
    rows = []
    for r in sorted(view.rows, key=lambda r: r.params_b):
        state = _state(r)
        rate = (f.messages.plain("cap.rate", rate=tokens_rate(r.tokens_per_s, f))
                if r.tokens_per_s is not None and state != "no" else "—")
        rows.append([r.model, MARKS[state], precision_label(r.precision, f),
                     f"{f.gib(r.needed_gib)} / {f.gib(r.has_gib)}", rate])
    return format_table(rows)


def assumed(view: CapacityView, f: Formatter) -> str:
    context = next((r.context_tokens for r in view.rows if r.context_tokens), None)
    return f.messages.text("cap.assumed", context=f.number(context) if context else "—")


def picks(view: CapacityView) -> tuple[tuple[str, str], ...]:
    """(model id, name) of the models a button opens in full: the largest that fits and the next ones up (else
    the smallest)."""
    if view.training:
        ordered_t = sorted(view.training, key=lambda r: r.params_b)
        fitting = [r for r in ordered_t if any(x.state == "fits" for x in r.fits)]
        start = ordered_t.index(fitting[-1]) if fitting else 0
        return tuple((r.model_id, r.model) for r in ordered_t[start:start + BUTTONS])
    ordered = sorted(view.rows, key=lambda r: r.params_b)
    best = largest(view)
    start = ordered.index(best) if best is not None else 0
    return tuple((r.model_id, r.model) for r in ordered[start:start + BUTTONS])


def training_headline(view: CapacityView, f: Formatter) -> str:
    """Per method, the largest model whose plan fits the cards' memory; else the smallest model's shortfall."""
    ordered = sorted(view.training, key=lambda r: r.params_b)
    items = []
    for method in _methods(view):
        fitting = [r for r in ordered if any(x.method == method and x.state == "fits" for x in r.fits)]
        if fitting:
            items.append(f.messages.plain("cap.train.item", method=f.messages.plain(f"method.{method}"),
                                          model=fitting[-1].model))
    if items:
        return f.messages.text("cap.train.best", items=f.messages.plain("common.list_sep").join(items))
    if not ordered:
        return ""
    smallest = ordered[0]
    need = min((x.needed_gib for x in smallest.fits), default=0.0)
    return f.messages.text("cap.train.none", model=smallest.model, needed=f.gib(need))


def training_table(view: CapacityView, f: Formatter) -> str:
    """Model · full · LoRA · QLoRA: ✓ / ⚠ with the need per GPU, or ✗."""
    rows = [["", *(f.messages.plain(f"method.{m}") for m in _methods(view))]]
    for r in sorted(view.training, key=lambda r: r.params_b):
        rows.append([r.model, *(f"{MARKS[x.state]} {f.gib(x.needed_gib)}" if x.state != "no" else MARKS[x.state]
                                for x in r.fits)])
    return format_table(rows)


def _methods(view: CapacityView) -> tuple[str, ...]:
    """The training methods the rows hold, in their order (full, LoRA, QLoRA)."""
    return tuple(x.method for x in view.training[0].fits) if view.training else ()


def training_assumed(view: CapacityView, f: Formatter) -> str:
    return f.messages.text("cap.train.assumed", seq_len=f.number(view.seq_len) if view.seq_len else "—")


def title(view: CapacityView, f: Formatter) -> str:
    """"What runs on 1x GeForce RTX 3090 (24 GB)": the memory said once (a Mac's name already holds it)."""
    vram = f.gb(view.gpu.vram_gb)
    name = view.gpu.name
    key = "cap.header_named" if spells_memory(name, view.gpu.vram_gb) else "cap.header"
    if view.training:
        key = key.replace("cap.", "cap.train.")
    return f.messages.plain(key, count=view.count, gpu=name, vram=vram)


def spells_memory(name: str, vram_gb: float) -> bool:
    """Whether a card's name already says its memory ("RTX 5060 Ti 16GB", "Apple M3 Ultra (96 GB)")."""
    return f"{vram_gb:g} GB" in name or f"{vram_gb:g}GB" in name


def read_as_line(view: CapacityView, f: Formatter) -> str:
    """"A card with 12 GB, read as GeForce RTX 2060 12GB: the slowest of the 5 such cards ...", or ""."""
    if view.read_as is None:
        return ""
    memory, _, count = view.read_as
    return f.messages.text("card.read_as", memory=f.gb(memory), gpu=view.gpu.name, count=count)


def fallback(view: CapacityView, f: Formatter) -> str:
    """The notification text: the headline's first line."""
    first = training_headline(view, f) if view.training else headline(view, f)
    return first.split("\n", 1)[0].replace("*", "")
