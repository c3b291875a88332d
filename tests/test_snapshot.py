"""The snapshot: what it holds, and indexes derived from it once per snapshot."""

import dataclasses

from knowledge.snapshot import load_snapshot


def test_snapshot_holds_the_loaded_catalog(catalog_engine):
    snap = load_snapshot(catalog_engine)
    assert len(snap.gpus) >= 45 and len(snap.models) >= 40 and len(snap.providers) >= 13
    for offers in snap.offers_by_gpu.values():
        prices = [o.usd_per_gpu_hour for o in offers]
        assert prices == sorted(prices), "offers are cheapest first"
        assert all(o.usd_per_gpu_hour * o.gpu_count - o.usd_per_hour < 1e-5 for o in offers)
    assert snap.prices_as_of() == max(o.observed_at for offers in snap.offers_by_gpu.values() for o in offers)


def test_derived_is_built_once_per_snapshot(snapshot):
    calls = []

    def build(snap):
        calls.append(snap)
        return object()

    first = snapshot.derived("test-index", build)
    assert snapshot.derived("test-index", build) is first
    assert calls == [snapshot]
    # A new snapshot (after a price refresh) never sees the old snapshot's index.
    newer = dataclasses.replace(snapshot, offers_by_gpu=dict(snapshot.offers_by_gpu))
    assert newer.derived("test-index", build) is not first
    assert len(calls) == 2
