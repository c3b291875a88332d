"""A digest as plain data (the `digest preview --json` changes, the card view) and as a Slack card.

The cards package renders `blocks/digest.json.j2` (bot.render) in the channel's language; if that ever
fails, a small built-in Block Kit card with the same facts, worded by the same message catalog, is used
(logged as an error; in English if the language's own texts fail too), so a digest is never lost to a
template.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal

from bot.locales import DEFAULT_LANGUAGE
from bot.render.cards import BlockDict, SlackMessage
from bot.render.digest import MAX_CHANGES as MAX_LINES
from bot.render.digest import MAX_GPUS, ChangeJson, ChangeView, DigestView, GpuView, OfferView
from bot.render.filters import escape_mrkdwn
from bot.render.formats import Formatter
from bot.render.messages import Messages
from rules.market.changes import Change, DigestInput, GpuDigest, SeriesPrice
from rules.types import GpuSpec, Provider

log = logging.getLogger(__name__)


def sparkline(values: Sequence[Decimal | None]) -> str:
    """The same sparkline the digest card template draws (one definition: `bot.render.filters`)."""
    from bot.render.filters import sparkline as draw

    return draw([float(v) if v is not None else None for v in values])


def _money(v: Decimal | None) -> str | None:
    return None if v is None else f"{v.quantize(Decimal('0.0001')).normalize():f}"


def change_json(c: Change, gpus: Mapping[str, GpuSpec]) -> ChangeJson:
    """One change exactly as `digest preview --json` promises it."""
    spec = gpus.get(c.key.gpu_id)
    return {
        "gpu": {"id": c.key.gpu_id, "name": spec.name if spec is not None else c.key.gpu_id},
        "provider": c.key.provider_id,
        "gpu_count": c.key.gpu_count,
        "tier": c.key.tier,
        "market": c.key.market,
        "kind": c.kind,
        "old_usd_per_hour": _money(c.old_usd_per_hour),
        "new_usd_per_hour": _money(c.new_usd_per_hour),
        "change_pct": None if c.change_pct is None else float(c.change_pct),
    }


def changes_json(digest: DigestInput, gpus: Mapping[str, GpuSpec]) -> list[ChangeJson]:
    return [change_json(c, gpus) for g in digest.gpus for c in g.changes]


def _offer(p: SeriesPrice | None, providers: Mapping[str, Provider]) -> OfferView | None:
    if p is None:
        return None
    return {
        "provider": p.key.provider_id, "provider_name": _provider_name(p.key.provider_id, providers),
        "gpu_count": p.key.gpu_count, "tier": p.key.tier, "instance_type": p.instance_type, "region": p.region,
        "usd_per_hour": _money(p.usd_per_hour), "usd_per_gpu_hour": _money(p.usd_per_gpu_hour),
        "p10_usd_per_hour": _money(p.p10_usd_per_hour), "listings": p.listings,
        "observed_at": p.observed_at.isoformat() if p.observed_at.year > 1 else None,
    }


def _provider_name(provider_id: str, providers: Mapping[str, Provider]) -> str:
    prov = providers.get(provider_id)
    return str(prov.name) if prov is not None and getattr(prov, "name", None) else provider_id


def card_change(c: Change, gpus: Mapping[str, GpuSpec], providers: Mapping[str, Provider]) -> ChangeView:
    """A change as the card shows it: `provider` is the display name ("Lambda"), `provider_id` the id."""
    return {**change_json(c, gpus), "provider": _provider_name(c.key.provider_id, providers),
            "provider_id": c.key.provider_id}


def gpu_view(g: GpuDigest, gpus: Mapping[str, GpuSpec], providers: Mapping[str, Provider]) -> GpuView:
    spec = gpus.get(g.gpu_id)
    return {
        "id": g.gpu_id, "name": spec.name if spec is not None else g.gpu_id,
        "changes": [card_change(c, gpus, providers) for c in g.changes],
        "cheapest_now": _offer(g.cheapest_now, providers),
        "new_cheapest": _offer(g.new_cheapest, providers),
        "old_cheapest": _offer(g.old_cheapest, providers),
        "spot_spread_pct": None if g.spot_spread is None else float(g.spot_spread.spread_pct),
        "series_30d": [_money(v) for v in g.series_30d],
        "sparkline": sparkline(g.series_30d),
        "prices_at": g.prices_at.isoformat() if g.prices_at else None,
    }


def digest_view(digest: DigestInput, *, gpus: Mapping[str, GpuSpec], providers: Mapping[str, Provider]) -> DigestView:
    """The digest card's view: plain JSON values, in catalog order."""
    return {
        "gpus": [gpu_view(g, gpus, providers) for g in digest.gpus],
        "since": digest.since.isoformat() if digest.since else None,
        "prices_at": digest.prices_at.isoformat() if digest.prices_at else None,
        "threshold_pct": float(digest.thresholds.pct),
        "threshold_usd_per_gpu_hour": float(digest.thresholds.usd_per_gpu_hour),
        "suppressed": digest.suppressed,
        "change_count": digest.change_count,
        "sources": [
            {"source": s.source, "provider": s.provider_id, "observed_at": s.observed_at.isoformat(),
             "age_hours": s.age_hours, "failing": s.failing, "error": s.error}
            for s in digest.sources
        ],
    }


def render_digest(digest: DigestInput, *, gpus: Mapping[str, GpuSpec], providers: Mapping[str, Provider], lang: str,
                  now: datetime | None = None) -> SlackMessage:
    """The Slack message (`text` + `blocks`) in the channel's language."""
    view = digest_view(digest, gpus=gpus, providers=providers)
    try:
        from bot.render.cards import render_card

        return render_card("digest", view, lang, now=now).message()
    except Exception:  # a broken template: the built-in card still delivers the digest
        log.exception("digest template failed in %s; using the built-in card", lang)
    try:
        return builtin_card(view, lang, now=now)
    except Exception:  # a broken translation too: the same card in English
        log.exception("built-in digest card failed in %s; using English", lang)
    return builtin_card(view, DEFAULT_LANGUAGE, now=now)


def _change_line(c: ChangeView, f: Formatter) -> str:
    market = c.get("market")
    kind = market if market in ("auction", "marketplace") else c["tier"]
    key = "market" if market in ("auction", "marketplace") else "tier"
    tier = f.messages.plain(f"{key}.{kind}") if f.messages.has(f"{key}.{kind}") else kind
    pct = c["change_pct"]
    return f.messages.text(
        f"digest.change.{c['kind']}", provider=c["provider"], count=c["gpu_count"], tier=tier,
        old=f.money(_decimal(c["old_usd_per_hour"])), new=f.money(_decimal(c["new_usd_per_hour"])),
        pct=f.percent(pct / 100, signed=True) if pct is not None else "",
    )


def _gpu_lines(g: GpuView, f: Formatter) -> list[str]:
    lines = [_change_line(c, f) for c in g["changes"][:MAX_LINES]]
    if len(g["changes"]) > MAX_LINES:
        lines.append("…")
    best, old = g["new_cheapest"] or g["cheapest_now"], g["old_cheapest"]
    if best:
        rate = f.rate(_decimal(best["usd_per_gpu_hour"]))
        if g["new_cheapest"] and old:
            lines.append(f.messages.text("digest.new_cheapest", rate=rate, provider=best["provider_name"],
                                         old=f.rate(_decimal(old["usd_per_gpu_hour"]))))
        else:
            lines.append(f.messages.text("digest.cheapest", rate=rate, provider=best["provider_name"]))
    if g["spot_spread_pct"] is not None:
        lines.append(f.messages.text("digest.spread", pct=f.percent(g["spot_spread_pct"] / 100)))
    return lines


def builtin_card(view: DigestView, lang: str | None = DEFAULT_LANGUAGE, *, now: datetime | None = None) -> SlackMessage:
    """Every digest fact as a plain Block Kit card built without the template, worded by the message catalog.

    Escaping: the only outside text is GPU and provider names, which the catalog's `text` escapes (a GPU
    name in the heading is escaped here).
    """
    f = Formatter(Messages.for_language(lang))
    shown = view["gpus"][:MAX_GPUS]
    blocks: list[BlockDict] = [{"type": "header", "text": {"type": "plain_text", "text": f.messages.plain("digest.header")}}]
    for g in shown:
        spark = f" `{g['sparkline']}`" if g["sparkline"].strip() else ""
        text = f"*{escape_mrkdwn(g['name'], 100)}*{spark}\n" + "\n".join(_gpu_lines(g, f))
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}})
    notes = []
    if len(view["gpus"]) > len(shown):
        notes.append(f.messages.text("digest.more", count=f.number(len(view["gpus"]) - len(shown))))
    prices_at = _when(view["prices_at"])
    if prices_at is not None and now is not None:
        notes.append(f.messages.text("digest.age", age=f.age(prices_at, now)))
    for s in view["sources"][:6]:
        observed = _when(s["observed_at"])
        if s["failing"] and observed is not None and now is not None:
            notes.append(f.messages.text("digest.source_failing", source=s["provider"] or s["source"], age=f.age(observed, now)))
    if notes:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "\n".join(notes)[:2000]}]})
    n = view["change_count"]
    text = f.messages.plain("digest.fallback", count=f.number(n)) if n else f.messages.plain("digest.fallback_none")
    return {"text": text, "blocks": blocks}


def _decimal(value: str | None) -> Decimal | None:
    return None if value is None else Decimal(value)


def _when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)
