"""Notable rejects: the pinned GPU, popular cards people ask about, and the largest-memory near misses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rules.plans.fit import margin_numbers
from rules.plans.search import Search
from rules.tables import RuleTables
from rules.types import GpuSpec
from rules.verdict import Option, Rejection

NOTABLE_REJECTS = 4
# A reject is a near miss when its card has at least this share of the best plan's per-GPU memory:
# a 6 GB card for a job whose best plan uses 13 GiB per GPU is not worth a line.
NEAR_MISS_SHARE = 0.5


def _more_gpus(gpu_id: str, found: Search, top: Sequence[Option], gpus: Mapping[str, GpuSpec],
               headroom: float) -> Rejection | None:
    """A popular card that fits only with more GPUs than the best plan: "needs X on one card, has Y"."""
    fit = found.fits.get(gpu_id)
    if fit is None or fit.candidate is None or not top or any(o.gpu_id == gpu_id for o in top):
        return None
    if top[0].count != 1 or fit.candidate.count == 1:
        return None  # only "does it fit one card?" makes this worth a line
    return Rejection(gpu_id, "fit.needs_more_gpus", {
        "needed_gib": fit.need_gib, "has_gib": gpus[gpu_id].vram_gb, "gpus": fit.candidate.count,
        **margin_numbers(gpus[gpu_id], headroom)})


def notable_rejects(rejections: Sequence[Rejection], found: Search, top: Sequence[Option], pinned: str | None,
                    gpus: Mapping[str, GpuSpec], tables: RuleTables) -> tuple[Rejection, ...]:
    """Most relevant first: the pinned GPU, popular cards that need more cards than the best plan, the
    largest-memory near misses, then popular cards that cannot run it at all; tiny cards only when nothing fits."""
    by_id = {r.gpu_id: r for r in rejections}
    floor = NEAR_MISS_SHARE * top[0].memory.per_gpu_gib if top else 0.0
    out: list[Rejection] = []
    if pinned in by_id:
        out.append(by_id[pinned])
    popular = [g for g in tables.popular_gpus if g != pinned and g in gpus]
    out.extend(n for n in (_more_gpus(g, found, top, gpus, tables.headroom_fraction) for g in popular if g not in by_id) if n is not None)
    named = {o.gpu_id for o in out}  # one rejection per GPU: ids stand for the rejections
    near = sorted((r for r in rejections if r.gpu_id not in named and gpus[r.gpu_id].vram_gb >= floor),
                  key=lambda r: (-float(gpus[r.gpu_id].vram_gb), r.gpu_id))
    out.extend(near)
    named.update(r.gpu_id for r in near)
    out.extend(by_id[g] for g in popular if g in by_id and g not in named)
    if not top:  # nothing fits: the largest cards say how far off the job is
        out.extend(sorted((r for r in rejections if r.gpu_id not in named),
                          key=lambda r: (-float(gpus[r.gpu_id].vram_gb), r.gpu_id)))
    unique: dict[str, Rejection] = {}
    for r in out:
        unique.setdefault(r.gpu_id, r)  # first mention wins
    return tuple(unique.values())[:NOTABLE_REJECTS]
