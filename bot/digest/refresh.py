"""What the clock does for prices besides digests: refresh live catalogs on schedule, and upload a digest's charts.

A refresh that fails keeps the last good prices (knowledge.gpuhunt_source records the error for `prices status`);
a chart that fails is logged and the digest, already posted, stays posted.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import Engine

if TYPE_CHECKING:
    from slack_sdk import WebClient

    from knowledge.digest_tables import DigestSubscription
    from knowledge.snapshot import Snapshot
    from rules.market.changes import DigestInput

log = logging.getLogger(__name__)


def refresh_if_due(engine: Engine, every: timedelta | None, catalog_url: str | None,
                   now: datetime) -> list[tuple[str, str]]:
    """(outcome, what) per provider when the last live attempt is older than `every`; [] when not due or off."""
    if every is None:
        return []
    from knowledge.gpuhunt_source import refresh
    from knowledge.price_status import last_refresh_attempt

    last = last_refresh_attempt(engine)
    if last is not None and now - last < every:
        return []
    try:
        results = refresh(engine, catalog_url=catalog_url, now=now)
    except Exception:  # a broken refresh must not stop the digests; the last prices stay in force
        log.exception("price refresh failed")
        return [("refresh_failed", "gpuhunt")]
    return [("refreshed" if r.ok else "refresh_failed", f"{r.provider_id}: {r.error or r.observations}")
            for r in results]


def upload_charts(client: WebClient, engine: Engine, sub: DigestSubscription, digest: DigestInput,
                  snapshot: Snapshot, *, now: datetime, thread_ts: str, limit: int, days: int) -> int:
    """A price-history chart per reported GPU (the first `limit`), in the digest's thread; returns how many."""
    from bot.render.chart import render_price_chart
    from bot.render.messages import Messages
    from knowledge.history import price_history

    uploaded = 0
    for gpu in digest.gpus[:limit]:
        spec = snapshot.gpus.get(gpu.gpu_id)
        name = spec.name if spec is not None else gpu.gpu_id
        try:
            series = price_history(engine, gpu.gpu_id, until=now, days=days)
            png = render_price_chart(series, gpu_name=name, language=sub.language, days=days)
            title = Messages.for_language(sub.language).plain("chart.title", gpu=name, days=days)
            client.files_upload_v2(channel=sub.channel_id, thread_ts=thread_ts, file=png,
                                   filename=f"{gpu.gpu_id}-prices.png", title=title, alt_txt=title)
            uploaded += 1
        except Exception as exc:  # noqa: BLE001  # a chart is extra: log it, keep the posted digest
            response: object = getattr(exc, "response", None)
            getter = getattr(response, "get", None)
            code = getter("error") if callable(getter) else None
            log.warning("digest %s: chart for %s not uploaded: %s", sub.id, gpu.gpu_id, code or type(exc).__name__)
    return uploaded
