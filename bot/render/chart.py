"""A price-history chart as a PNG: per GPU, the cheapest $/GPU-hour over time, one line per market kind.

matplotlib is imported here, inside `render_price_chart`, and nowhere else: a process that never draws a chart
never pays its import (DESIGN §8 start-time and memory budgets). Sized for Slack's preview (1000 × 560 px, large
type), labelled in the reader's language (a CJK font from the `mplfonts` package when one is installed), and the
kinds told apart by colour, line style and marker, so a grey-scale or colour-blind reader still sees which is which.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from bot.render.formats import Formatter
from bot.render.messages import Messages

log = logging.getLogger(__name__)
# kind → (colour, line style, marker); colours from the Okabe-Ito colour-blind-safe palette.
STYLES: Mapping[str, tuple[str, str, str]] = {
    "on-demand": ("#0072B2", "-", "o"),
    "spot": ("#D55E00", "--", "s"),
    "auction": ("#CC79A7", ":", "^"),
    "marketplace": ("#009E73", "-.", "D"),
}
ORDER = ("on-demand", "spot", "auction", "marketplace")
SIZE_IN = (10.0, 5.6)
DPI = 100
MAX_TICKS = 6


@lru_cache(maxsize=1)
def cjk_font() -> Path | None:
    """Noto Sans CJK SC (covers Chinese, Japanese kana and Korean Hangul) shipped by `mplfonts`, if installed."""
    from importlib.util import find_spec

    spec = find_spec("mplfonts")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
    return path if path.is_file() else None


def render_price_chart(series: Mapping[str, Sequence[tuple[datetime, Decimal]]], *, gpu_name: str, language: str,
                       days: int) -> bytes:
    """The chart as PNG bytes; `series` maps a market kind to (day, $/GPU-hour) points, oldest first."""
    import matplotlib

    matplotlib.use("Agg")  # no display: render to memory
    from matplotlib import font_manager
    from matplotlib import pyplot as plt

    messages = Messages.for_language(language)
    f = Formatter(messages)
    font = cjk_font()
    family = "DejaVu Sans"
    if font is not None:
        font_manager.fontManager.addfont(str(font))
        family = font_manager.FontProperties(fname=str(font)).get_name()
    elif language in ("zh-Hans", "ja", "ko"):
        log.warning("no CJK font found (install mplfonts): %s chart labels may not show", language)
    with plt.rc_context({"font.family": family, "font.size": 15, "axes.titlesize": 18, "axes.labelsize": 15}):
        fig, ax = plt.subplots(figsize=SIZE_IN, dpi=DPI)
        try:
            _draw(ax, series, messages, f)
            ax.set_title(messages.plain("chart.title", gpu=gpu_name, days=days))
            ax.set_ylabel(messages.plain("chart.axis"))
            fig.tight_layout()
            out = io.BytesIO()
            fig.savefig(out, format="png")
        finally:
            plt.close(fig)
    return out.getvalue()


def _draw(ax: object, series: Mapping[str, Sequence[tuple[datetime, Decimal]]], messages: Messages,
          f: Formatter) -> None:
    from matplotlib.axes import Axes

    assert isinstance(ax, Axes)
    every_day: set[datetime] = set()
    drawn = 0
    for kind in sorted(series, key=lambda k: ORDER.index(k) if k in ORDER else len(ORDER)):
        points = list(series[kind])
        if not points:
            continue
        colour, style, marker = STYLES.get(kind, ("#000000", "-", "x"))
        days = [p[0] for p in points]
        xs = [_days(d) for d in days]
        ys = [float(p[1]) for p in points]
        every_day.update(days)
        label = messages.plain(f"market.{kind}") if messages.has(f"market.{kind}") else kind
        ax.plot(xs, ys, drawstyle="steps-post", color=colour, linestyle=style, linewidth=2.6, label=label,
                marker=marker, markevery=max(1, len(xs) // 8), markersize=8)
        drawn += 1
    if drawn:
        ax.legend(loc="best", frameon=False)
        ticks = sorted(every_day)
        step = max(1, len(ticks) // MAX_TICKS)
        chosen = ticks[::step]
        ax.set_xticks([_days(t) for t in chosen], [f.date(t) for t in chosen])
        ax.tick_params(axis="x", labelrotation=20)
    else:
        ax.text(0.5, 0.5, messages.plain("chart.empty"), ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)


def _days(when: datetime) -> float:
    """A point's x: days since the epoch (ticks are labelled with localized dates, so the axis stays numeric)."""
    return when.timestamp() / 86400
