"""Offers indexed once per snapshot: per GPU and tier, the offers able to provide a plan of N GPUs.

`rules.market.offers.cheapest` scans a GPU's offers cheapest-first and skips those of the other tier or
unable to provide the plan; at 100,000 offers that scan was most of an answer. The book keeps, per
GPU and tier, the offers of at least each instance size (and their NVLink-class subset) and the
offers that can join a multi-node plan, each in the snapshot's order. Scanning such a subsequence
with the same rule picks the same offer: the skipped offers could never be picked, and the scan
stops at the same price bound (see `cheapest_in`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rules.market.offers import GPUS_PER_NODE, Pick, can_provide, linked
from rules.types import Offer, Provider

# One offer as the scan reads it: $/GPU-hour and instance $/hour as floats (the same values
# rules.market.offers.cheapest converts per offer), GPUs per instance, billing step, provider, the offer.
Row = tuple[float, float, int, int, str, Offer]


def _rows(offers: Sequence[Offer]) -> tuple[Row, ...]:
    return tuple((float(o.usd_per_gpu_hour), float(o.usd_per_hour), o.gpu_count, o.billing_increment_s,
                  o.provider_id, o) for o in offers)


@dataclass(frozen=True, slots=True)
class Shelf:
    """One GPU, one tier: for each instance size present (ascending), the offers at least that large
    and their NVLink-class subset; and the 8-GPU-or-larger NVLink-class offers (multi-node plans)."""

    sizes: tuple[int, ...]
    at_least: tuple[tuple[Row, ...], ...]
    linked_at_least: tuple[tuple[Row, ...], ...]
    cluster: tuple[Row, ...]

    @classmethod
    def build(cls, offers: Sequence[Offer]) -> Shelf:
        """One row per offer, shared by every list it is in (the lists hold references only)."""
        rows = _rows(offers)
        by_text: dict[str, bool] = {}  # a market has few interconnect texts: each is read once
        links = [by_text[o.interconnect] if o.interconnect in by_text
                 else by_text.setdefault(o.interconnect, linked(o)) for o in offers]
        sizes = tuple(sorted({o.gpu_count for o in offers}))
        at_least = tuple(tuple(r for r in rows if r[2] >= size) for size in sizes)
        linked_at_least = tuple(tuple(r for r, ok in zip(rows, links) if ok and r[2] >= size) for size in sizes)
        cluster = tuple(r for r, ok in zip(rows, links) if ok and r[2] >= GPUS_PER_NODE)
        return cls(sizes, at_least, linked_at_least, cluster)

    def capable(self, count: int) -> tuple[tuple[Row, ...], tuple[Row, ...]]:
        """Offers with at least `count` GPUs per instance, and their NVLink-class subset (count <= 8)."""
        for index, size in enumerate(self.sizes):
            if size >= count:
                return self.at_least[index], self.linked_at_least[index]
        return (), ()


EMPTY_SHELF = Shelf((), (), (), ())


@dataclass(frozen=True, slots=True)
class OfferBook:
    """Every GPU's shelves by tier, built from a snapshot's `offers_by_gpu` (sorted by $/GPU-hour)."""

    shelves: Mapping[tuple[str, str], Shelf]
    # Per (GPU, tier, multi-node count): the shelf's cluster rows that can make up the plan with the providers
    # they were filtered with (`can_provide`), built on first use. At 100,000 offers most cluster rows of a
    # popular GPU come from providers without a fabric and were tested again at every scan.
    _clusters: dict[tuple[str, str, int], tuple[Mapping[str, Provider], tuple[Row, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    # Per (row list, count): its rows grouped by billing (`billing_groups`), with the list and the billing
    # minimums they were grouped by; built on first use.
    _groups: dict[tuple[int, int], tuple[tuple[Row, ...], Mapping[str, int], tuple[BillingGroup, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def build(cls, offers_by_gpu: Mapping[str, Sequence[Offer]]) -> OfferBook:
        shelves: dict[tuple[str, str], Shelf] = {}
        for gpu_id, offers in offers_by_gpu.items():
            by_tier: dict[str, list[Offer]] = {}
            for offer in offers:
                by_tier.setdefault(offer.tier, []).append(offer)
            for tier, group in by_tier.items():
                shelves[(gpu_id, tier)] = Shelf.build(group)
        return cls(shelves)

    def shelf(self, gpu_id: str, tier: str) -> Shelf:
        return self.shelves.get((gpu_id, tier), EMPTY_SHELF)

    def cluster(self, gpu_id: str, tier: str, count: int, providers: Mapping[str, Provider]) -> tuple[Row, ...]:
        """The cluster rows (in price order) able to provide a plan of `count` (> 8) GPUs with `providers`."""
        key = (gpu_id, tier, count)
        found = self._clusters.get(key)
        if found is None or found[0] is not providers:
            rows = tuple(r for r in self.shelf(gpu_id, tier).cluster if can_provide(r[5], count, providers))
            found = self._clusters[key] = (providers, rows)
        return found[1]


    def billing_groups(self, rows: tuple[Row, ...], count: int,
                       minimum_s: Mapping[str, int]) -> tuple[BillingGroup, ...]:
        """`rows` (one of this book's row lists) grouped by what decides a row's cost besides its instance price:
        billing step, the provider's minimum and the instances a plan of `count` rents (built once per list)."""
        key = (id(rows), count)
        found = self._groups.get(key)
        if found is None or found[0] is not rows or found[1] is not minimum_s:
            found = self._groups[key] = (rows, minimum_s, _group_by_billing(rows, count, minimum_s))
        return found[2]


# Rows costed alike (same billing step, provider minimum and instance count), cheapest instance first: (step,
# minimum, instances, ((instance $/hour, position in the list, offer), ...)).
BillingGroup = tuple[int, int, int, tuple[tuple[float, int, Offer], ...]]
# A bounded scan that has not stopped after this many rows is finished from the billing groups.
SCAN_ROWS = 16


def _group_by_billing(rows: Sequence[Row], count: int, minimum_s: Mapping[str, int]) -> tuple[BillingGroup, ...]:
    groups: dict[tuple[int, int, int], list[tuple[float, int, Offer]]] = {}
    for index, (_, per_hour, size, step, provider_id, offer) in enumerate(rows):
        minimum = minimum_s.get(provider_id, 0) if minimum_s else 0
        instances = 1 if size >= count else -(-count // size)
        groups.setdefault((step, minimum, instances), []).append((per_hour, index, offer))
    return tuple((*key, _first_of_each_price(sorted(members))) for key, members in groups.items())


def _first_of_each_price(members: list[tuple[float, int, Offer]]) -> tuple[tuple[float, int, Offer], ...]:
    """Of the members at one instance price (same cost in a group), the first in the list's order: only it can
    win (a market of copies holds dozens at each price)."""
    out: list[tuple[float, int, Offer]] = []
    for member in members:
        if not out or member[0] != out[-1][0]:
            out.append(member)
    return tuple(out)


def _cheapest_of_all(groups: tuple[BillingGroup, ...], seconds: float) -> tuple[Offer | None, float, int]:
    """What `_scan` returns unbounded (every row costed, the first of the cheapest wins) and its position, group
    by group: within a group every row is billed the same time for the same instances, so its cost grows with
    the instance price; a group is read only while its costs tie with its cheapest."""
    best: Offer | None = None
    best_cost, best_index = math.inf, -1
    for step, minimum, instances, members in groups:
        billed = seconds if step <= 1 else math.ceil(seconds / step - 1e-9) * step
        if billed < minimum:
            billed = minimum
        floor = math.inf
        for per_hour, index, offer in members:
            cost = per_hour * instances * billed
            if cost > floor:
                break
            floor = cost
            if cost < best_cost or (cost == best_cost and index < best_index):
                best, best_cost, best_index = offer, cost, index
    return best, best_cost, best_index


def cheapest_in(book: OfferBook, gpu_id: str, count: int, hours: float | None, *, spot: bool, rework: float,
                providers: Mapping[str, Provider], minimum_s: Mapping[str, int], prefer_link: bool) -> Pick:
    """`rules.market.offers.cheapest` over the GPU's offers, from the book: the same pick, fewer offers looked at.

    With `prefer_link`, the cheapest NVLink-class offer wins whenever one can provide the plan, so the
    linked subsequence alone decides; only when it is empty are the others scanned (all of them, as
    `cheapest` does when no offer of the preferred group ever sets its bound).
    """
    tier = "spot" if spot else "on-demand"
    if count > GPUS_PER_NODE:
        # All NVLink-class and able to provide the plan: the rows `cheapest` skips with `can_provide` never set
        # the bound, and the first row it stops at is at least as dear as every row after it.
        rows, bounded = book.cluster(gpu_id, tier, count, providers), True
    else:
        shelf = book.shelves.get((gpu_id, tier), EMPTY_SHELF)
        rows, linked_rows = shelf.capable(count)
        bounded = not prefer_link or bool(linked_rows)
        if prefer_link and linked_rows:
            rows = linked_rows
    if not rows:  # most GPUs of a catalog have no offer of the tier or size: no pick, whatever the scan
        return NO_PICK
    seconds = (hours if hours is not None else 1.0) * (1.0 + (rework if spot else 0.0)) * 3600.0
    if not bounded:  # nothing linked: every capable offer is costed (a few per billing group suffice)
        best, cost, _ = _cheapest_of_all(book.billing_groups(rows, count, minimum_s), seconds)
        return _pick(best, cost, hours)
    best, cost, stopped = _scan(rows[:SCAN_ROWS] if len(rows) > SCAN_ROWS else rows, count, seconds, True,
                                minimum_s)
    if stopped or len(rows) <= SCAN_ROWS:
        return _pick(best, cost, hours)
    # Still under its bound after SCAN_ROWS rows (hourly billing of a short job, instances larger than the plan):
    # the cheapest of all rows is the scan's pick when it costs at least its own row's price floor, since the
    # scan stops only at a row whose floor reaches the best cost so far (floors grow along the rows).
    best, cost, index = _cheapest_of_all(book.billing_groups(rows, count, minimum_s), seconds)
    if best is not None and cost < rows[index][0] * (count * seconds):
        best, cost, _ = _scan(rows, count, seconds, True, minimum_s)
    return _pick(best, cost, hours)


NO_PICK = Pick(None, None)  # frozen: one shared value


def _pick(best: Offer | None, cost: float, hours: float | None) -> Pick:
    if best is None:
        return NO_PICK
    return Pick(best, cost / 3600.0 if hours is not None else None)


def _scan(rows: Sequence[Row], count: int, seconds: float, bounded: bool,
          minimum_s: Mapping[str, int]) -> tuple[Offer | None, float, bool]:
    """The loop of rules.market.offers.cheapest over one group of rows, all able to provide the plan (same
    arithmetic, same first-cheapest tie rule); `bounded`: the best so far bounds the scan (False only for the
    non-preferred fallback). Also whether the scan stopped at its bound before the end of `rows`."""
    floor_factor = count * seconds
    best: Offer | None = None
    best_cost = bound = math.inf
    for per_gpu, per_hour, size, step, provider_id, offer in rows:
        if per_gpu * floor_factor >= bound:
            return best, best_cost, True
        billed = seconds if step <= 1 else math.ceil(seconds / step - 1e-9) * step
        if minimum_s and billed < minimum_s.get(provider_id, 0):
            billed = minimum_s[provider_id]
        cost = per_hour * (1 if size >= count else -(-count // size)) * billed
        if cost < best_cost:
            best_cost, best = cost, offer
            if bounded:
                bound = cost
    return best, best_cost, False
