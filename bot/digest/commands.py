"""`/gpu digest …` and `/gpu alert …`: parse the words, apply them to the stored state, answer as data + text.

Every text is in the asked language (the message catalog, bot/locales; see bot.digest.texts for the accepted
localized command words); the data (`CommandResult.data`) stays language-neutral.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, TypedDict
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import Engine

from bot.digest import texts
from bot.digest.texts import canonical, split_words
from bot.locales import DEFAULT_LANGUAGE
from knowledge import digest_store as store
from knowledge.digest_store import SubscriptionSettings
from knowledge.digest_tables import DigestSubscription, PriceAlert

if TYPE_CHECKING:
    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)

DEFAULT_HOUR = 9
DEFAULT_PCT = Decimal(5)
DEFAULT_USD = Decimal("0.05")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
KEYWORDS = {"threshold", "thresh", "gpus", "gpu", "tz", "timezone", "lang", "language", "at", "empty", "always"}
TIME = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm|h|時|时|点|시)?$")
PCT = re.compile(r"^(\d+(?:\.\d+)?)%$")
USD = re.compile(r"^\$?(\d+(?:\.\d+)?)(?:\$|usd)?(?:/(?:h|hr|hour|gpu-?h(?:ou)?r?))?$")
OPS = {"<": "<", "<=": "<", "below": "<", "under": "<", "less": "<", ">": ">", ">=": ">", "above": ">", "over": ">"}
OFF_WORDS = ("off", "stop", "unsubscribe", "cancel")
MAX_SHORT_ID = 2**31 - 1  # a bigger "alert off N" is no alert of ours (and would overflow the column)


TextParam = str | int | texts.Usd | texts.Percent | texts.Day  # a value a text's `{placeholder}` shows (money and percentages
# are formatted for the text's language by `texts.text`)


class TextParams(TypedDict, total=False):
    """The values of a command answer's text (`digest.*` / `alert.*` in the message catalog), by placeholder."""

    cadence: str
    time: str
    timezone: str
    gpus: str
    pct: str
    usd: str
    channel_id: str
    lines: str
    problem: str
    help: str
    id: int
    gpu: str
    op: str
    now: str
    note: str


class SubscriptionInfo(TypedDict):
    """A channel's digest as plain values (App Home, `digest list`, JSON); `when`, `gpu_names` in a language."""

    id: int
    channel_id: str
    cadence: str
    time: str  # "09:00", or "mon 09:00" for a weekly digest
    timezone: str
    when: str
    threshold_pct: str
    threshold_usd: str
    gpus: list[str]
    gpu_names: str
    language: str
    status: str
    last_error: str | None
    last_period: str | None


class AlertInfo(TypedDict):
    """A personal price alert as plain values (App Home, `alert list`, JSON)."""

    id: int
    gpu: str
    gpu_name: str
    op: str
    usd_per_gpu_hour: str
    armed: bool
    active: bool
    last_fired_at: str | None
    last_error: str | None


class CommandData(TypedDict, total=False):
    """The language-neutral data of an answer: what was subscribed or added, or the listed ones."""

    subscription: SubscriptionInfo
    subscriptions: list[SubscriptionInfo]
    alert: AlertInfo
    alerts: list[AlertInfo]


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What the listener shows (ephemeral): a stable code, its values, and the text in the asked language."""

    ok: bool
    code: str
    params: TextParams
    text: str
    data: CommandData = field(default_factory=lambda: CommandData())


class CommandProblem(ValueError):
    """Text we could not use: a problem code (`problem.*` in the message catalog) and its values.

    `str(problem)` is the English text (the CLI prints it); `problem.text(lang)` is the localized one.
    """

    def __init__(self, code: str, **params: TextParam) -> None:
        self.code, self.params = code, params
        super().__init__(texts.text(DEFAULT_LANGUAGE, code, **params))

    def text(self, lang: str) -> str:
        return texts.text(lang, self.code, **self.params)


def message(code: str, lang: str, **params: TextParam) -> str:
    """The text of `code` in the language (the message catalog)."""
    return texts.text(lang, code, **params)


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


def resolve_gpus(snapshot: Snapshot, names: Sequence[str]) -> tuple[str, ...]:
    """GPU names → catalog ids; an ambiguous name ("a100") means all its candidates."""
    out: list[str] = []
    for name in names:
        match = snapshot.gpu_index.resolve(name)
        if match.status == "found" and match.gpu_id:
            ids: Sequence[str] = [match.gpu_id]
        elif match.status == "ambiguous":
            ids = list(match.candidates)
        else:
            if match.suggestions:
                raise CommandProblem("problem.unknown_gpu.hint", name=name, suggestions=", ".join(match.suggestions[:3]))
            raise CommandProblem("problem.unknown_gpu", name=name)
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


def parse_subscription(words: Sequence[str], *, snapshot: Snapshot, tz: str, lang: str) -> SubscriptionSettings:
    """`daily|weekly [mon] [09:00] [threshold 5% $0.10] [gpus a,b] [tz Zone] [lang de] [empty]` → settings."""
    d = _Draft(cadence=canonical(words[0]))
    i = 1
    while i < len(words):
        i = _parse_word(d, words, i)
    zone = d.tz or tz
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise CommandProblem("problem.timezone", zone=zone) from None
    gpus = resolve_gpus(snapshot, d.gpu_names) if d.gpu_names else ()
    return SubscriptionSettings(d.cadence, d.hour, d.minute, zone, d.weekday, d.pct, d.usd, gpus, d.lang or lang, d.report_empty)


def _parse_word(d: _Draft, words: Sequence[str], i: int) -> int:
    """Consume one setting starting at words[i]; return the next index."""
    w = canonical(words[i])
    if w.isalpha() and len(w) >= 3 and w[:3] in WEEKDAYS and w not in KEYWORDS:
        if d.cadence != "weekly":
            raise CommandProblem("problem.weekday_needs_weekly", word=words[i])
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
        while j < len(words) and canonical(words[j]) not in KEYWORDS:
            d.gpu_names += [n for n in words[j].split(",") if n]
            j += 1
        if len(d.gpu_names) == before:
            raise CommandProblem("problem.gpus_empty")
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
    raise CommandProblem("problem.unknown_word", word=words[i])


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
        raise CommandProblem("problem.threshold_empty")
    return i


def _gpu_names(snapshot: Snapshot, ids: Sequence[str]) -> str:
    return ", ".join(snapshot.gpus[g].name if g in snapshot.gpus else g for g in ids)


def describe_subscription(sub: DigestSubscription, snapshot: Snapshot, lang: str = "en") -> SubscriptionInfo:
    """A subscription as plain values (App Home, `digest list`, JSON); `gpu_names` and `when` in `lang`."""
    gpus = [g for g in sub.gpu_filter.split(",") if g]
    when = f"{WEEKDAYS[sub.weekday]} " if sub.cadence == "weekly" else ""
    return {
        "id": sub.short_id, "channel_id": sub.channel_id, "cadence": sub.cadence,
        "time": f"{when}{sub.local_hour:02d}:{sub.local_minute:02d}", "timezone": sub.timezone,
        "when": local_time(sub, lang),
        "threshold_pct": str(sub.threshold_pct.normalize()), "threshold_usd": f"{sub.threshold_usd:.2f}",
        "gpus": gpus, "gpu_names": _gpu_names(snapshot, gpus) if gpus else message("gpus.all", lang),
        "language": sub.language, "status": sub.status, "last_error": sub.last_error,
        "last_period": sub.last_period_key,
    }


def local_time(sub: DigestSubscription, lang: str) -> str:
    """"09:00", or with the weekday for a weekly digest ("09:00 on Monday", "월요일 09:00")."""
    clock = f"{sub.local_hour:02d}:{sub.local_minute:02d}"
    if sub.cadence != "weekly":
        return clock
    return message("time.weekly", lang, time=clock, weekday=message(f"weekday.{sub.weekday}", lang))


def subscription_line(info: SubscriptionInfo, lang: str) -> str:
    """One subscription for a list (`digest list`, App Home), with its delivery problem if any."""
    line = message("digest.list.line", lang, channel=info["channel_id"], cadence=message(f"cadence.{info['cadence']}", lang),
                   time=info["when"], timezone=info["timezone"], pct=texts.Percent(Decimal(info["threshold_pct"])),
                   usd=texts.Usd(Decimal(info["threshold_usd"])), gpus=info["gpu_names"])
    return line + (f" — ⚠ {texts.delivery_error(lang, info['last_error'])}" if info["last_error"] else "")


def handle_digest_command(
    text: str, *, engine: Engine, snapshot: Snapshot, team_id: str, channel_id: str, user_id: str, lang: str,
    tz: str = "UTC", now: datetime | None = None,
) -> CommandResult:
    """`/gpu digest …` in one channel of one workspace. Bad text gets a clear answer, never an exception."""
    now = now or datetime.now(UTC)
    words = split_words(text)
    verb = canonical(words[0]) if words else "help"
    if verb in ("help", "?"):
        return CommandResult(True, "digest.help", {}, message("digest.help", lang))
    if verb == "list":
        return _digest_list(engine, snapshot, team_id, channel_id, lang)
    if verb in OFF_WORDS:
        done = store.turn_off(engine, team_id=team_id, channel_id=channel_id, now=now)
        code = "digest.off" if done else "digest.not_subscribed"
        return CommandResult(done, code, {"channel_id": channel_id}, message(code, lang))
    if verb not in ("daily", "weekly"):
        return _digest_error(CommandProblem("problem.verb", word=words[0]), lang)
    try:
        settings = parse_subscription(words, snapshot=snapshot, tz=tz or "UTC", lang=lang)
    except CommandProblem as exc:
        return _digest_error(exc, lang)
    sub = store.upsert_subscription(engine, team_id=team_id, channel_id=channel_id, settings=settings, user_id=user_id, now=now)
    info = describe_subscription(sub, snapshot, lang)
    params = TextParams(cadence=message(f"cadence.{settings.cadence}", lang), time=info["when"], timezone=settings.timezone,
                        gpus=info["gpu_names"], pct=info["threshold_pct"], usd=info["threshold_usd"])
    shown: dict[str, TextParam] = {k: v for k, v in params.items() if isinstance(v, (str, int))}
    shown |= {"pct": texts.Percent(settings.threshold_pct), "usd": texts.Usd(settings.threshold_usd)}
    return CommandResult(True, "digest.subscribed", params, message("digest.subscribed", lang, **shown), {"subscription": info})


def _digest_error(problem: CommandProblem, lang: str) -> CommandResult:
    params = TextParams(problem=problem.text(lang), help=message("digest.help", lang))
    return CommandResult(False, "digest.error", params, message("digest.error", lang, **params))


def _digest_list(engine: Engine, snapshot: Snapshot, team_id: str, channel_id: str, lang: str) -> CommandResult:
    subs = [describe_subscription(s, snapshot, lang)
            for s in store.list_subscriptions(engine, team_id=team_id, include_paused=True)]
    subs.sort(key=lambda s: (s["channel_id"] != channel_id, s["channel_id"]))
    if not subs:
        return CommandResult(True, "digest.list.empty", {}, message("digest.list.empty", lang), {"subscriptions": []})
    lines = "\n".join(f"• {subscription_line(s, lang)}" for s in subs)
    return CommandResult(True, "digest.list", {"lines": lines}, message("digest.list", lang, lines=lines), {"subscriptions": subs})


def cheapest_usd_per_gpu_hour(snapshot: Snapshot, gpu_id: str, tier: str = "on-demand") -> Decimal | None:
    offers = [o for o in snapshot.offers_by_gpu.get(gpu_id, ()) if o.tier == tier]
    return min((o.usd_per_gpu_hour for o in offers), default=None)


def parse_alert(words: Sequence[str], snapshot: Snapshot) -> tuple[str, str, Decimal, tuple[str, ...]]:
    """`h100 < 2`, `h100 below $2/hr`, `a100-80gb under 1.5` → (gpu id, op, $/GPU-hour, other candidates)."""
    joined = " ".join(words)
    m = re.match(r"^(.*?)\s*(<=|>=|<|>|\bbelow\b|\bunder\b|\bless than\b|\babove\b|\bover\b)\s*(\S+)\s*$", joined, re.IGNORECASE)
    if not m or not m.group(1).strip():
        raise CommandProblem("problem.alert_syntax")
    op = OPS[m.group(2).lower().split()[0]]
    price = USD.match(m.group(3).lower())
    try:
        usd = Decimal(price.group(1)) if price else Decimal("nan")
    except InvalidOperation:
        usd = Decimal("nan")
    if not usd.is_finite() or usd <= 0 or usd > 1000:
        raise CommandProblem("problem.alert_price", price=m.group(3))
    # An ambiguous name ("h100") watches its first (most common) candidate; the answer says which.
    gpu_ids = resolve_gpus(snapshot, [m.group(1).strip()])
    return gpu_ids[0], op, usd, gpu_ids[1:]


def describe_alert(alert: PriceAlert, snapshot: Snapshot) -> AlertInfo:
    return {"id": alert.short_id, "gpu": alert.gpu_id, "gpu_name": _gpu_names(snapshot, [alert.gpu_id]), "op": alert.op,
            "usd_per_gpu_hour": f"{alert.usd_per_gpu_hour:.2f}", "armed": alert.armed, "active": alert.active,
            "last_fired_at": alert.last_fired_at.isoformat() if alert.last_fired_at else None, "last_error": alert.last_error}


def alert_line(info: AlertInfo, lang: str) -> str:
    """One alert for a list (`alert list`, App Home), with its delivery problem if any."""
    line = message("alert.list.line", lang, id=info["id"], gpu=info["gpu_name"], op=info["op"],
                   usd=texts.Usd(Decimal(info["usd_per_gpu_hour"])))
    line += "" if info["armed"] else message("alert.list.fired", lang)
    return line + (f" — ⚠ {texts.delivery_error(lang, info['last_error'])}" if info["last_error"] else "")


def handle_alert_command(
    text: str, *, engine: Engine, snapshot: Snapshot, team_id: str, user_id: str, lang: str,
    channel_id: str | None = None, now: datetime | None = None,
) -> CommandResult:
    """`/gpu alert h100 < 2`, `alert list`, `alert off ID` for one user of one workspace."""
    now = now or datetime.now(UTC)
    words = split_words(text)
    verb = canonical(words[0]) if words else "help"
    if verb in ("help", "?"):
        return CommandResult(True, "alert.help", {}, message("alert.help", lang))
    if verb == "list":
        alerts = [describe_alert(a, snapshot) for a in store.list_alerts(engine, team_id=team_id, user_id=user_id)]
        if not alerts:
            return CommandResult(True, "alert.list.empty", {}, message("alert.list.empty", lang), {"alerts": []})
        lines = "\n".join(f"• {alert_line(a, lang)}" for a in alerts)
        return CommandResult(True, "alert.list", {"lines": lines}, message("alert.list", lang, lines=lines), {"alerts": alerts})
    if verb in ("off", "delete", "remove"):
        ident = words[1].lstrip("#") if len(words) > 1 else ""
        if not (ident.isascii() and ident.isdigit()):
            return _alert_error(CommandProblem("problem.alert_which"), lang)
        number = int(ident)  # the alert's number in this workspace (`alert list`), never a global row id
        done = number <= MAX_SHORT_ID and store.turn_alert_off(engine, team_id=team_id, user_id=user_id, short_id=number)
        code = "alert.off" if done else "alert.not_found"
        return CommandResult(done, code, {"id": number}, message(code, lang, id=number))
    try:
        gpu_id, op, usd, others = parse_alert(words, snapshot)
    except CommandProblem as exc:
        return _alert_error(exc, lang)
    alert = store.add_alert(engine, team_id=team_id, user_id=user_id, gpu_id=gpu_id, op=op, usd_per_gpu_hour=usd, language=lang, now=now)
    current = cheapest_usd_per_gpu_hour(snapshot, gpu_id)
    gpu = _gpu_names(snapshot, [gpu_id])
    note = message("alert.added.note", lang, gpu=gpu, others=_gpu_names(snapshot, others)) if others else ""
    params = TextParams(id=alert.short_id, gpu=gpu, op=op, usd=f"{usd:.2f}",
                        now=f"{current:.2f}" if current is not None else message("alert.now.none", lang), note=note)
    now_shown: TextParam = texts.Usd(current) if current is not None else params["now"]
    shown: dict[str, TextParam] = {k: v for k, v in params.items() if isinstance(v, (str, int))}
    shown |= {"usd": texts.Usd(usd), "now": now_shown}
    return CommandResult(True, "alert.added", params, message("alert.added", lang, **shown), {"alert": describe_alert(alert, snapshot)})


def _alert_error(problem: CommandProblem, lang: str) -> CommandResult:
    params = TextParams(problem=problem.text(lang), help=message("alert.help", lang))
    return CommandResult(False, "alert.error", params, message("alert.error", lang, **params))


@dataclass(frozen=True, slots=True)
class HomeData:
    subscriptions: tuple[SubscriptionInfo, ...]
    alerts: tuple[AlertInfo, ...]
    errors: tuple[str, ...]
    missed: tuple[str, ...] = ()  # digests of the last MISSED_DAYS that could not be posted (folded into the next)


MISSED_DAYS = 7


def list_for_user(
    engine: Engine, *, snapshot: Snapshot, team_id: str, user_id: str, lang: str = "en", now: datetime | None = None
) -> HomeData:
    """App Home: the workspace's digests, the user's alerts, delivery errors to fix and missed digests, in `lang`."""
    subs = tuple(describe_subscription(s, snapshot, lang)
                 for s in store.list_subscriptions(engine, team_id=team_id, include_paused=True))
    alerts = tuple(describe_alert(a, snapshot) for a in store.list_alerts(engine, team_id=team_id, user_id=user_id))
    errors = tuple(message("home.error.channel", lang, channel=s["channel_id"], error=texts.delivery_error(lang, s["last_error"]))
                   for s in subs if s["last_error"])
    errors += tuple(message("home.error.alert", lang, id=a["id"], error=texts.delivery_error(lang, a["last_error"]))
                    for a in alerts if a["last_error"])
    since = (now or datetime.now(UTC)) - timedelta(days=MISSED_DAYS)
    missed = tuple(message("home.missed", lang, channel=channel, period=period_shown(key, lang))
                   for channel, key in store.recent_missed(engine, team_id=team_id, since=since))
    return HomeData(subs, alerts, errors, missed)


def period_shown(key: str, lang: str) -> str:
    """A digest period key in words of the language: "2026-11-24" as a date, "2026-W48" as the week of its Monday
    (a key of another shape is shown as it is)."""
    try:
        if "-W" in key:
            year, week = key.split("-W")
            return message("period.week", lang, day=texts.Day(date.fromisocalendar(int(year), int(week), 1)))
        return message("period.day", lang, day=texts.Day(date.fromisoformat(key)))
    except ValueError:
        return key

