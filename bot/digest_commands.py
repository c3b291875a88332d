"""`/gpu digest …` and `/gpu alert …`: parse the words, apply them to the stored state, answer as data + text."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import Engine

from knowledge import digest_store as store
from knowledge.digest_store import SubscriptionSettings

log = logging.getLogger(__name__)

DEFAULT_HOUR = 9
DEFAULT_PCT = Decimal(5)
DEFAULT_USD = Decimal("0.05")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
KEYWORDS = {"threshold", "thresh", "gpus", "gpu", "tz", "timezone", "lang", "language", "at", "empty", "always"}
TIME = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm|h)?$")
PCT = re.compile(r"^(\d+(?:\.\d+)?)%$")
USD = re.compile(r"^\$?(\d+(?:\.\d+)?)(?:\$|usd)?(?:/(?:h|hr|hour|gpu-?h(?:ou)?r?))?$")
OPS = {"<": "<", "<=": "<", "below": "<", "under": "<", "less": "<", ">": ">", ">=": ">", "above": ">", "over": ">"}

# English texts; a language whose catalog (bot/locales) has the key uses its own.
TEXTS = {
    "digest.help": "Digest: `/gpu digest daily 09:00 threshold 5% gpus h100,a100,4090`, "
                   "`/gpu digest weekly mon 09:00`, `/gpu digest list`, `/gpu digest off`.",
    "digest.subscribed": "This channel gets a {cadence} GPU price digest at {time} ({timezone}) for {gpus}, "
                         "reporting changes of at least {pct}% and ${usd}/GPU-hour.",
    "digest.off": "This channel's price digest is off.",
    "digest.not_subscribed": "This channel has no price digest.",
    "digest.list": "Price digests in this workspace:\n{lines}",
    "digest.list.empty": "No channel in this workspace has a price digest yet.",
    "digest.error": "I couldn't set the digest: {problem}\n{help}",
    "alert.help": "Alerts: `/gpu alert h100 < 2` (per GPU-hour, DM once when crossed), `/gpu alert list`, "
                  "`/gpu alert off ID`.",
    "alert.added": "Alert #{id}: I'll DM you once when the cheapest on-demand {gpu} is {op} ${usd}/GPU-hour "
                   "(now {now}).{note}",
    "alert.list": "Your price alerts:\n{lines}",
    "alert.list.empty": "You have no price alerts.",
    "alert.off": "Alert #{id} is off.",
    "alert.not_found": "You have no active alert #{id}.",
    "alert.error": "I couldn't set the alert: {problem}\n{help}",
    "alert.fired": "Price alert #{id}: {gpu} is now ${usd}/GPU-hour on-demand at {provider} ({count}× {instance}), "
                   "{op} your ${line}. I'll tell you again after it goes back.",
}


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What the listener shows (ephemeral): a stable code, its values, and the text in the asked language."""

    ok: bool
    code: str
    params: Mapping[str, Any]
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)


class CommandProblem(ValueError):
    """Text we could not use; the message says what and how to write it."""


def message(code: str, lang: str, **params: Any) -> str:
    """The localized text when the locale catalog has it, else English."""
    try:
        from bot.render.messages import Messages

        msgs = Messages.for_language(lang)
        if msgs.has(code):
            return msgs.plain(code, **params)
    except Exception:  # a missing/half-written locale must never break the command
        log.debug("no locale text for %s in %s", code, lang, exc_info=True)
    return TEXTS[code].format(**params)


def parse_time(token: str) -> tuple[int, int] | None:
    m = TIME.match(token.lower())
    if not m:
        return None
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    if m.group(3) == "pm" and hour < 12:
        hour += 12
    if m.group(3) == "am" and hour == 12:
        hour = 0
    return (hour, minute) if hour < 24 and minute < 60 else None


def resolve_gpus(snapshot: Any, names: Sequence[str]) -> tuple[str, ...]:
    """GPU names → catalog ids; an ambiguous name ("a100") means all its candidates."""
    out: list[str] = []
    for name in names:
        match = snapshot.gpu_index.resolve(name)
        if match.status == "found" and match.gpu_id:
            ids: Sequence[str] = [match.gpu_id]
        elif match.status == "ambiguous":
            ids = list(match.candidates)
        else:
            hint = f" (did you mean {', '.join(match.suggestions[:3])}?)" if match.suggestions else ""
            raise CommandProblem(f"I don't know the GPU '{name}'{hint}")
        out += [i for i in ids if i not in out]
    return tuple(out)


@dataclass(slots=True)
class _Draft:
    cadence: str = ""
    hour: int = DEFAULT_HOUR
    minute: int = 0
    weekday: int = 0
    pct: Decimal = DEFAULT_PCT
    usd: Decimal = DEFAULT_USD
    gpu_names: list[str] = field(default_factory=list)
    tz: str | None = None
    lang: str | None = None
    report_empty: bool = False


def parse_subscription(words: Sequence[str], *, snapshot: Any, tz: str, lang: str) -> SubscriptionSettings:
    """`daily|weekly [mon] [09:00] [threshold 5% $0.10] [gpus a,b] [tz Zone] [lang de] [empty]` → settings."""
    d = _Draft(cadence=words[0].lower())
    i = 1
    while i < len(words):
        i = _parse_word(d, words, i)
    zone = d.tz or tz
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise CommandProblem(f"'{zone}' is not a time zone name (e.g. Europe/Berlin, America/New_York)") from None
    gpus = resolve_gpus(snapshot, d.gpu_names) if d.gpu_names else ()
    return SubscriptionSettings(d.cadence, d.hour, d.minute, zone, d.weekday, d.pct, d.usd, gpus, d.lang or lang, d.report_empty)


def _parse_word(d: _Draft, words: Sequence[str], i: int) -> int:
    """Consume one setting starting at words[i]; return the next index."""
    w = words[i].lower().strip(",")
    if w.isalpha() and len(w) >= 3 and w[:3] in WEEKDAYS and w not in KEYWORDS:
        if d.cadence != "weekly":
            raise CommandProblem(f"a weekday ('{words[i]}') only goes with `weekly`")
        d.weekday = WEEKDAYS.index(w[:3])
        return i + 1
    if w == "at":
        return i + 1
    if (t := parse_time(w)) is not None:
        d.hour, d.minute = t
        return i + 1
    if w in ("threshold", "thresh"):
        return _parse_threshold(d, words, i + 1)
    if w in ("gpus", "gpu"):
        j, before = i + 1, len(d.gpu_names)
        while j < len(words) and words[j].lower() not in KEYWORDS:
            d.gpu_names += [n for n in words[j].split(",") if n]
            j += 1
        if len(d.gpu_names) == before:
            raise CommandProblem("`gpus` needs a list, e.g. `gpus h100,a100,4090`")
        return j
    if w in ("tz", "timezone") and i + 1 < len(words):
        d.tz = words[i + 1]
        return i + 2
    if w in ("lang", "language") and i + 1 < len(words):
        d.lang = words[i + 1]
        return i + 2
    if w in ("empty", "always"):
        d.report_empty = True
        return i + 1
    raise CommandProblem(f"I didn't understand '{words[i]}'")


def _parse_threshold(d: _Draft, words: Sequence[str], i: int) -> int:
    start = i
    while i < len(words):
        w = words[i].lower()
        if (m := PCT.match(w)) is not None:
            d.pct = Decimal(m.group(1))
        elif w.startswith("$") or w.endswith("$") or "/" in w:
            m2 = USD.match(w)
            if m2 is None:
                break
            d.usd = Decimal(m2.group(1))
        else:
            break
        i += 1
    if i == start:
        raise CommandProblem("`threshold` needs a percentage and/or dollars, e.g. `threshold 5%` or `threshold 5% $0.10`")
    return i


def _gpu_names(snapshot: Any, ids: Sequence[str]) -> str:
    return ", ".join(snapshot.gpus[g].name if g in snapshot.gpus else g for g in ids)


def describe_subscription(sub: Any, snapshot: Any) -> dict[str, Any]:
    """A subscription as plain values (App Home, `digest list`, JSON)."""
    gpus = [g for g in sub.gpu_filter.split(",") if g]
    when = f"{WEEKDAYS[sub.weekday]} " if sub.cadence == "weekly" else ""
    return {
        "id": sub.id, "channel_id": sub.channel_id, "cadence": sub.cadence,
        "time": f"{when}{sub.local_hour:02d}:{sub.local_minute:02d}", "timezone": sub.timezone,
        "threshold_pct": str(sub.threshold_pct.normalize()), "threshold_usd": f"{sub.threshold_usd:.2f}",
        "gpus": gpus, "gpu_names": _gpu_names(snapshot, gpus) if gpus else "every GPU",
        "language": sub.language, "status": sub.status, "last_error": sub.last_error,
        "last_period": sub.last_period_key,
    }


def handle_digest_command(
    text: str, *, engine: Engine, snapshot: Any, team_id: str, channel_id: str, user_id: str, lang: str,
    tz: str = "UTC", now: datetime | None = None,
) -> CommandResult:
    """`/gpu digest …` in one channel of one workspace. Bad text gets a clear answer, never an exception."""
    now = now or datetime.now(UTC)
    words = text.split()
    verb = words[0].lower() if words else "help"
    if verb in ("help", "?"):
        return CommandResult(True, "digest.help", {}, message("digest.help", lang))
    if verb == "list":
        return _digest_list(engine, snapshot, team_id, channel_id, lang)
    if verb in ("off", "stop", "unsubscribe", "cancel"):
        done = store.turn_off(engine, team_id=team_id, channel_id=channel_id, now=now)
        code = "digest.off" if done else "digest.not_subscribed"
        return CommandResult(done, code, {"channel_id": channel_id}, message(code, lang))
    if verb not in ("daily", "weekly"):
        return _digest_error(f"start with `daily`, `weekly`, `list` or `off` (not '{words[0]}')", lang)
    try:
        settings = parse_subscription(words, snapshot=snapshot, tz=tz, lang=lang)
    except CommandProblem as exc:
        return _digest_error(str(exc), lang)
    sub = store.upsert_subscription(engine, team_id=team_id, channel_id=channel_id, settings=settings, user_id=user_id, now=now)
    info = describe_subscription(sub, snapshot)
    params = {"cadence": settings.cadence, "time": info["time"], "timezone": settings.timezone,
              "gpus": info["gpu_names"], "pct": info["threshold_pct"], "usd": info["threshold_usd"]}
    return CommandResult(True, "digest.subscribed", params, message("digest.subscribed", lang, **params), {"subscription": info})


def _digest_error(problem: str, lang: str) -> CommandResult:
    params = {"problem": problem, "help": message("digest.help", lang)}
    return CommandResult(False, "digest.error", params, message("digest.error", lang, **params))


def _digest_list(engine: Engine, snapshot: Any, team_id: str, channel_id: str, lang: str) -> CommandResult:
    subs = [describe_subscription(s, snapshot) for s in store.list_subscriptions(engine, team_id=team_id)]
    subs.sort(key=lambda s: (s["channel_id"] != channel_id, s["channel_id"]))
    if not subs:
        return CommandResult(True, "digest.list.empty", {}, message("digest.list.empty", lang), {"subscriptions": []})
    lines = "\n".join(
        f"• <#{s['channel_id']}>: {s['cadence']} {s['time']} {s['timezone']}, ≥{s['threshold_pct']}% & ${s['threshold_usd']}, "
        f"{s['gpu_names']}" + (f" — ⚠ {s['last_error']}" if s["last_error"] else "")
        for s in subs
    )
    return CommandResult(True, "digest.list", {"lines": lines}, message("digest.list", lang, lines=lines), {"subscriptions": subs})


def cheapest_usd_per_gpu_hour(snapshot: Any, gpu_id: str, tier: str = "on-demand") -> Decimal | None:
    offers = [o for o in snapshot.offers_by_gpu.get(gpu_id, ()) if o.tier == tier]
    return min((o.usd_per_gpu_hour for o in offers), default=None)


def parse_alert(words: Sequence[str], snapshot: Any) -> tuple[str, str, Decimal, tuple[str, ...]]:
    """`h100 < 2`, `h100 below $2/hr`, `a100-80gb under 1.5` → (gpu id, op, $/GPU-hour, other candidates)."""
    joined = " ".join(words)
    m = re.match(r"^(.*?)\s*(<=|>=|<|>|\bbelow\b|\bunder\b|\bless than\b|\babove\b|\bover\b)\s*(\S+)\s*$", joined, re.I)
    if not m or not m.group(1).strip():
        raise CommandProblem("write it as `/gpu alert h100 < 2` (dollars per GPU-hour)")
    op = OPS[m.group(2).lower().split()[0]]
    price = USD.match(m.group(3).lower())
    try:
        usd = Decimal(price.group(1)) if price else Decimal("nan")
    except InvalidOperation:
        usd = Decimal("nan")
    if not usd.is_finite() or usd <= 0 or usd > 1000:
        raise CommandProblem(f"'{m.group(3)}' is not a price per GPU-hour like `2` or `$1.50`")
    # An ambiguous name ("h100") watches its first (most common) candidate; the answer says which.
    gpu_ids = resolve_gpus(snapshot, [m.group(1).strip()])
    return gpu_ids[0], op, usd, gpu_ids[1:]


def describe_alert(alert: Any, snapshot: Any) -> dict[str, Any]:
    return {"id": alert.id, "gpu": alert.gpu_id, "gpu_name": _gpu_names(snapshot, [alert.gpu_id]), "op": alert.op,
            "usd_per_gpu_hour": f"{alert.usd_per_gpu_hour:.2f}", "armed": alert.armed, "active": alert.active,
            "last_fired_at": alert.last_fired_at.isoformat() if alert.last_fired_at else None, "last_error": alert.last_error}


def handle_alert_command(
    text: str, *, engine: Engine, snapshot: Any, team_id: str, user_id: str, lang: str,
    channel_id: str | None = None, now: datetime | None = None,
) -> CommandResult:
    """`/gpu alert h100 < 2`, `alert list`, `alert off ID` for one user of one workspace."""
    now = now or datetime.now(UTC)
    words = text.split()
    verb = words[0].lower() if words else "help"
    if verb in ("help", "?"):
        return CommandResult(True, "alert.help", {}, message("alert.help", lang))
    if verb == "list":
        alerts = [describe_alert(a, snapshot) for a in store.list_alerts(engine, team_id=team_id, user_id=user_id)]
        if not alerts:
            return CommandResult(True, "alert.list.empty", {}, message("alert.list.empty", lang), {"alerts": []})
        lines = "\n".join(f"• #{a['id']} {a['gpu_name']} {a['op']} ${a['usd_per_gpu_hour']}/GPU-h"
                          + ("" if a["armed"] else " (fired; re-arms when the price goes back)") for a in alerts)
        return CommandResult(True, "alert.list", {"lines": lines}, message("alert.list", lang, lines=lines), {"alerts": alerts})
    if verb in ("off", "delete", "remove"):
        ident = words[1].lstrip("#") if len(words) > 1 else ""
        if not ident.isdigit():
            return _alert_error("say which alert: `/gpu alert off 3` (see `/gpu alert list`)", lang)
        done = store.turn_alert_off(engine, team_id=team_id, user_id=user_id, alert_id=int(ident))
        code = "alert.off" if done else "alert.not_found"
        return CommandResult(done, code, {"id": int(ident)}, message(code, lang, id=int(ident)))
    try:
        gpu_id, op, usd, others = parse_alert(words, snapshot)
    except CommandProblem as exc:
        return _alert_error(str(exc), lang)
    alert = store.add_alert(engine, team_id=team_id, user_id=user_id, gpu_id=gpu_id, op=op, usd_per_gpu_hour=usd, language=lang, now=now)
    current = cheapest_usd_per_gpu_hour(snapshot, gpu_id)
    note = f" I took it as {_gpu_names(snapshot, [gpu_id])}, not {_gpu_names(snapshot, others)}." if others else ""
    params = {"id": alert.id, "gpu": _gpu_names(snapshot, [gpu_id]), "op": op, "usd": f"{usd:.2f}",
              "now": f"${current:.2f}" if current is not None else "no on-demand offer", "note": note}
    return CommandResult(True, "alert.added", params, message("alert.added", lang, **params), {"alert": describe_alert(alert, snapshot)})


def _alert_error(problem: str, lang: str) -> CommandResult:
    params = {"problem": problem, "help": message("alert.help", lang)}
    return CommandResult(False, "alert.error", params, message("alert.error", lang, **params))


@dataclass(frozen=True, slots=True)
class HomeData:
    subscriptions: tuple[dict[str, Any], ...]
    alerts: tuple[dict[str, Any], ...]
    errors: tuple[str, ...]


def list_for_user(engine: Engine, *, snapshot: Any, team_id: str, user_id: str) -> HomeData:
    """App Home: the workspace's digests, the user's alerts, and delivery errors to fix."""
    subs = tuple(describe_subscription(s, snapshot) for s in store.list_subscriptions(engine, team_id=team_id))
    alerts = tuple(describe_alert(a, snapshot) for a in store.list_alerts(engine, team_id=team_id, user_id=user_id))
    errors = tuple(f"<#{s['channel_id']}>: {s['last_error']}" for s in subs if s["last_error"])
    errors += tuple(f"alert #{a['id']}: {a['last_error']}" for a in alerts if a["last_error"])
    return HomeData(subs, alerts, errors)
