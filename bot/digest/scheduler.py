"""The digest clock: posts each due digest exactly once per subscription and period, and fires price alerts.

Exactly once, also with several schedulers and after a crash: a period is claimed in the database
(a unique row) before anything is posted; our digests carry Slack message metadata
(`gpu_advisor_digest` + subscription id + period), so whoever takes over a claim that never got
recorded first looks in the channel's history for it and only posts when it is not there.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol, TypedDict, runtime_checkable
from zoneinfo import ZoneInfo

from sqlalchemy import Engine

from knowledge import digest_store as store
from knowledge.db import as_utc
from knowledge.digest_tables import DigestPeriod, DigestSubscription, PriceAlert
from knowledge.history import bundled_providers, compute_digest, list_imports, prices_at
from knowledge.slack_store import prune_deliveries
from rules.market.changes import DigestInput, SeriesPrice, Thresholds, per_gpu_cheapest

if TYPE_CHECKING:
    from slack_sdk import WebClient
    from slack_sdk.oauth.installation_store import InstallationStore

    from knowledge.snapshot import Snapshot

log = logging.getLogger(__name__)
EVENT_TYPE = "gpu_advisor_digest"
# Errors that retrying cannot fix: recorded on the subscription (App Home shows them), period closed as failed.
PERMANENT_ERRORS = frozenset({
    "not_in_channel", "channel_not_found", "is_archived", "invalid_auth", "token_revoked", "account_inactive",
    "not_authed", "missing_scope", "team_access_not_granted", "restricted_action", "no_token", "user_not_found",
})
HISTORY_PAGES = 5


class TokenSource(Protocol):
    """Where a workspace's bot token comes from: one SLACK_BOT_TOKEN, or the OAuth installation store."""

    def bot_token(self, team_id: str) -> str | None: ...


@runtime_checkable
class ReinstallAware(Protocol):
    """A token source that knows when a workspace installed the app (OAuth): a pause older than that is over."""

    def installed_at(self, team_id: str) -> datetime | None: ...


@dataclass(frozen=True, slots=True)
class StaticTokens:
    token: str | None

    def bot_token(self, team_id: str) -> str | None:
        return self.token


@dataclass(frozen=True, slots=True)
class InstallationTokens:
    """Adapter over a Bolt InstallationStore (knowledge.slack_store.DbInstallationStore)."""

    installation_store: InstallationStore

    def bot_token(self, team_id: str) -> str | None:
        bot = self.installation_store.find_bot(enterprise_id=None, team_id=team_id)
        return bot.bot_token if bot is not None else None

    def installed_at(self, team_id: str) -> datetime | None:
        """When the workspace's bot was (re)installed; a pause older than this is over."""
        bot = self.installation_store.find_bot(enterprise_id=None, team_id=team_id)
        return datetime.fromtimestamp(float(bot.installed_at), tz=UTC) if bot is not None else None


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    api_url: str
    worker: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    lease: timedelta = store.CLAIM_LEASE
    timeout_s: int = 30
    dry_run: bool = False
    # Live prices (gpuhunt) are refreshed this often by the clock; None = never (tests, `digest run`).
    refresh_every: timedelta | None = None
    catalog_url: str | None = None  # where gpuhunt catalogs are published (None: gpuhunt's own)
    charts: int = 3  # price-history charts uploaded with a digest (its first GPUs); 0 = none
    chart_days: int = 30


class DryRunLine(TypedDict):
    """A digest `digest run --dry-run` would post: where, for which period, with how many changes."""

    subscription_id: int
    channel_id: str
    period: str
    changes: int


@dataclass(slots=True)
class RunReport:
    outcomes: dict[str, list[str]] = field(default_factory=dict)  # outcome → ["sub 3 2025-06-02", ...]
    alerts_fired: list[int] = field(default_factory=list)
    deliveries_pruned: int = 0

    def add(self, outcome: str, what: str) -> None:
        self.outcomes.setdefault(outcome, []).append(what)


def due_period(sub: DigestSubscription, now: datetime) -> tuple[str, datetime] | None:
    """The period key whose scheduled local time has passed (today's, or this ISO week's), else None."""
    zone = ZoneInfo(sub.timezone)
    local = now.astimezone(zone)
    at = time(sub.local_hour, sub.local_minute)
    if sub.cadence == "weekly":
        day = local.date() - timedelta(days=local.weekday()) + timedelta(days=sub.weekday)
        iso = local.isocalendar()
        key = f"{iso.year}-W{iso.week:02d}"
    else:
        day, key = local.date(), local.date().isoformat()
    scheduled = datetime.combine(day, at, tzinfo=zone)
    return (key, scheduled.astimezone(UTC)) if local >= scheduled else None


def period_key(sub: DigestSubscription, now: datetime) -> str:
    """The key of the period `now` falls in (due or not yet): the local date, or the ISO week."""
    local = now.astimezone(ZoneInfo(sub.timezone))
    if sub.cadence == "weekly":
        iso = local.isocalendar()
        return f"{iso.year}-W{iso.week:02d}"
    return local.date().isoformat()


def scheduled_for(sub: DigestSubscription, key: str) -> datetime | None:
    """When the period `key` was due (UTC), or None for a key of another cadence."""
    try:
        if "-W" in key:
            year, week = key.split("-W")
            day = date.fromisocalendar(int(year), int(week), sub.weekday + 1)
        else:
            day = date.fromisoformat(key)
    except ValueError:
        return None
    zone = ZoneInfo(sub.timezone)
    return datetime.combine(day, time(sub.local_hour, sub.local_minute), tzinfo=zone).astimezone(UTC)


def make_client(token: str, cfg: SchedulerConfig) -> WebClient:
    """A WebClient on our API URL that waits out 429s. No connection-error retry: a repeat post could double."""
    from slack_sdk import WebClient
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    from bot.tls import slack_tls_context

    return WebClient(token=token, base_url=cfg.api_url, timeout=cfg.timeout_s, ssl=slack_tls_context(),
                     retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=5)])


class _EventMetadata(TypedDict, total=False):
    """The slice of a message's `metadata` we read (conversations.history with include_all_metadata)."""

    event_type: str
    event_payload: dict[str, object]


class _HistoryMessage(TypedDict, total=False):
    ts: str
    metadata: _EventMetadata


def digest_metadata(sub: DigestSubscription, period_key: str, changes: int) -> dict[str, object]:
    """What our digest carries (Slack message metadata, readable by anyone in the channel): the workspace and its
    own number for the subscription, never the global row id (it would tell how many digests others have)."""
    return {"event_type": EVENT_TYPE,
            "event_payload": {"team_id": sub.team_id, "subscription_id": sub.short_id, "period": period_key,
                              "changes": changes}}


def is_our_digest(payload: Mapping[str, object], sub: DigestSubscription, period_key: str) -> bool:
    """This subscription's digest for the period: by team and number, or (posted before migration 0007,
    without a team) by the global row id."""
    if payload.get("period") != period_key:
        return False
    if "team_id" in payload:
        return payload["team_id"] == sub.team_id and str(payload.get("subscription_id")) == str(sub.short_id)
    return str(payload.get("subscription_id")) == str(sub.id)


def find_posted(client: WebClient, sub: DigestSubscription, period_key: str, oldest: datetime) -> str | None:
    """The ts of our digest for this period if it is already in the channel (message metadata), else None."""
    cursor = None
    for _ in range(HISTORY_PAGES):
        resp = client.conversations_history(channel=sub.channel_id, oldest=f"{oldest.timestamp():.6f}", limit=200,
                                            include_all_metadata=True, cursor=cursor)
        messages: list[_HistoryMessage] = resp.get("messages", [])
        for msg in messages:
            meta = msg.get("metadata") or _EventMetadata()
            if meta.get("event_type") == EVENT_TYPE and is_our_digest(meta.get("event_payload") or {}, sub, period_key):
                return str(msg["ts"])
        cursor = (resp.get("response_metadata") or {}).get("next_cursor")
        if not resp.get("has_more") or not cursor:
            return None
    return None


def subscription_digest(engine: Engine, sub: DigestSubscription, *, now: datetime, gpu_order: tuple[str, ...] = ()) -> DigestInput:
    """What changed since the channel's last digest, measured against what it was told (hysteresis)."""
    believed = store.load_states(engine, store.stored_id(sub)) or None
    since = as_utc(sub.last_prices_at) if sub.last_prices_at else None
    thresholds = Thresholds(Decimal(sub.threshold_pct), Decimal(sub.threshold_usd))
    gpu_filter = frozenset(g for g in sub.gpu_filter.split(",") if g)
    return compute_digest(engine, since=since, thresholds=thresholds, now=now, gpu_filter=gpu_filter,
                          believed=believed, gpu_order=gpu_order)


def slack_error(exc: Exception) -> str:
    """The Slack error code of an API failure, or a short name for a transport failure."""
    response = getattr(exc, "response", None)
    if response is not None:
        try:
            return str(response.get("error") or "unknown_error")
        except Exception:  # noqa: BLE001  # a non-dict body
            return "unknown_error"
    return type(exc).__name__


@dataclass(slots=True)
class Scheduler:
    """One clock process. `run_once(now)` is a whole tick; `run_forever` repeats it until stopped."""

    engine: Engine
    tokens: TokenSource
    cfg: SchedulerConfig
    catalog: Callable[[], Snapshot]  # gpus and providers for names and order
    printed: list[DryRunLine] = field(default_factory=list)  # dry-run output

    def run_once(self, now: datetime | None = None) -> RunReport:
        now = now or datetime.now(UTC)
        report = RunReport()
        if not self.cfg.dry_run:
            self.refresh_prices(now, report)
        snapshot = self.catalog()
        if not self.cfg.dry_run:
            self.resume_reinstalled(now, report)
        for sub in store.list_subscriptions(self.engine):
            what = f"subscription {sub.id} ({sub.team_id}/{sub.channel_id})"
            try:
                if not self.cfg.dry_run:
                    sub = self.resolve_stuck(sub, now, report)
                outcome = self.deliver(sub, now, snapshot)
            except Exception:  # one broken subscription must not stop the others
                log.exception("digest for %s failed", what)
                outcome = "error"
            report.add(outcome, what)
        if not self.cfg.dry_run:
            report.alerts_fired = self.check_alerts(now, snapshot)
            # Housekeeping the clock owns: answered-event ids older than any Slack retry.
            report.deliveries_pruned = prune_deliveries(self.engine, now=now)
        return report

    def deliver(self, sub: DigestSubscription, now: datetime, snapshot: Snapshot) -> str:
        due = due_period(sub, now)
        if due is None:
            return "not_due"
        key, scheduled = due
        if sub.last_period_key == key:
            return "done"
        if self.cfg.dry_run:
            digest = subscription_digest(self.engine, sub, now=now, gpu_order=tuple(snapshot.gpus))
            self.printed.append(DryRunLine(subscription_id=store.stored_id(sub), channel_id=sub.channel_id, period=key,
                                           changes=digest.change_count))
            return "would_post" if digest.change_count or sub.report_empty else "would_skip_empty"
        claim = store.claim_period(self.engine, subscription_id=store.stored_id(sub), period_key=key, worker=self.cfg.worker,
                                   now=now, lease=self.cfg.lease)
        if claim is None:
            return "held_elsewhere"
        return self._post_claimed(sub, claim, scheduled, now, snapshot)

    def resolve_stuck(self, sub: DigestSubscription, now: datetime, report: RunReport) -> DigestSubscription:
        """Settle earlier periods left `claimed`/`retry` after they ended, oldest first; return the fresh row.

        Found in the channel (our metadata): recorded as posted (`recovered_late`), the baseline moved as
        the lost attempt would have. Not found: `missed`, the baseline kept, so its changes come in the
        next digest. A transient Slack error leaves it `retry` for the next tick.
        """
        current = period_key(sub, now)
        sub_id = store.stored_id(sub)
        rows = [r for r in store.stuck_periods(self.engine, sub_id, now=now, lease=self.cfg.lease) if r.period_key != current]
        if not rows:
            return sub
        token = self.tokens.bot_token(sub.team_id)
        client = make_client(token, self.cfg) if token else None
        for row in rows:
            claim = store.take_over_period(self.engine, subscription_id=sub_id, period_key=row.period_key,
                                           worker=self.cfg.worker, now=now, lease=self.cfg.lease)
            if claim is not None:
                outcome = self._settle_late(sub, row, claim, client, now)
                report.add(outcome, f"subscription {sub.id} ({sub.team_id}/{sub.channel_id}) {row.period_key}")
                sub = store.get_subscription(self.engine, sub_id) or sub
        return sub

    def _settle_late(
        self, sub: DigestSubscription, row: DigestPeriod, claim: store.Claim, client: WebClient | None, now: datetime
    ) -> str:
        scheduled = scheduled_for(sub, row.period_key) or as_utc(row.claimed_at)
        ts = None
        if client is not None:
            try:
                ts = find_posted(client, sub, row.period_key, scheduled - timedelta(hours=1))
            except Exception as exc:  # noqa: BLE001  # classified: transient → retry later, permanent → missed
                code = slack_error(exc)
                if code not in PERMANENT_ERRORS:
                    store.finish_period(self.engine, claim, status="retry", now=now, error=code)
                    return "retry_late"
        if ts is None:
            store.finish_period(self.engine, claim, status="missed", now=now, error="missed")
            return "missed"
        digest = subscription_digest(self.engine, sub, now=as_utc(row.claimed_at))  # what the lost attempt posted
        store.finish_period(self.engine, claim, status="posted", now=now, message_ts=ts, prices_at=digest.prices_at,
                            states=digest.states, move_baseline=not store.delivered_after(self.engine, claim.subscription_id, claim.period_id))
        return "recovered_late"

    def _post_claimed(
        self, sub: DigestSubscription, claim: store.Claim, scheduled: datetime, now: datetime, snapshot: Snapshot
    ) -> str:
        token = self.tokens.bot_token(sub.team_id)
        if not token:
            return self._failed(sub, claim, "no_token", now)
        client = make_client(token, self.cfg)
        digest = subscription_digest(self.engine, sub, now=now, gpu_order=tuple(snapshot.gpus))
        try:
            if claim.takeover:
                ts = find_posted(client, sub, claim.period_key, scheduled - timedelta(hours=1))
                if ts is not None:
                    self._finish(claim, "posted", now, digest, ts)
                    return "recovered"
            if digest.change_count == 0 and not sub.report_empty:
                self._finish(claim, "empty", now, digest)
                return "empty"
            ts = self._post(client, sub, claim, digest, snapshot, now)
        except Exception as exc:  # noqa: BLE001  # SlackApiError, timeouts, connection resets: classified below
            code = slack_error(exc)
            if code in PERMANENT_ERRORS:
                return self._failed(sub, claim, code, now)
            log.warning("digest %s/%s: %s; will retry (history is checked first)", sub.id, claim.period_key, code)
            store.finish_period(self.engine, claim, status="retry", now=now, error=code)
            return "retry"
        self._finish(claim, "posted", now, digest, ts)
        return "posted"

    def _post(
        self, client: WebClient, sub: DigestSubscription, claim: store.Claim, digest: DigestInput, snapshot: Snapshot,
        now: datetime,
    ) -> str:
        from bot.digest.card import render_digest

        message = render_digest(digest, gpus=snapshot.gpus, providers=snapshot.providers, lang=sub.language, now=now)
        metadata = digest_metadata(sub, claim.period_key, digest.change_count)
        resp = client.chat_postMessage(channel=sub.channel_id, text=message["text"], blocks=message["blocks"],
                                       metadata=metadata, unfurl_links=False, unfurl_media=False)
        ts = str(resp["ts"])
        self._upload_charts(client, sub, digest, snapshot, now, ts)
        return ts

    def _upload_charts(self, client: WebClient, sub: DigestSubscription, digest: DigestInput, snapshot: Snapshot,
                       now: datetime, ts: str) -> None:
        from bot.digest.refresh import upload_charts

        upload_charts(client, self.engine, sub, digest, snapshot, now=now, thread_ts=ts, limit=self.cfg.charts,
                      days=self.cfg.chart_days)

    def _finish(self, claim: store.Claim, status: str, now: datetime, digest: DigestInput, ts: str | None = None) -> None:
        store.finish_period(self.engine, claim, status=status, now=now, message_ts=ts, prices_at=digest.prices_at,
                            states=digest.states)

    def _failed(self, sub: DigestSubscription, claim: store.Claim, code: str, now: datetime) -> str:
        log.warning("digest %s/%s cannot be delivered: %s", sub.id, claim.period_key, code)
        store.finish_period(self.engine, claim, status="failed", now=now, error=code)
        store.record_error(self.engine, claim.subscription_id, code, now)
        return "failed"

    def refresh_prices(self, now: datetime, report: RunReport) -> None:
        """Fresh prices by default (bot.digest.refresh): live catalogs when `refresh_every` has passed."""
        from bot.digest.refresh import refresh_if_due

        for outcome, what in refresh_if_due(self.engine, self.cfg.refresh_every, self.cfg.catalog_url, now):
            report.add(outcome, what)

    def resume_reinstalled(self, now: datetime, report: RunReport) -> None:
        """Resume a paused workspace once its bot was installed again after the pause (OAuth installs)."""
        if not isinstance(self.tokens, ReinstallAware):  # one SLACK_BOT_TOKEN: subscribing a channel again resumes it
            return
        for team_id, paused_at in store.paused_teams(self.engine).items():
            at = self.tokens.installed_at(team_id)
            if at is not None and at > paused_at:
                done = store.resume_workspace(self.engine, team_id=team_id, now=now)
                report.add("resumed", f"team {team_id}: {done.subscriptions} digests, {done.alerts} alerts")

    def check_alerts(self, now: datetime, snapshot: Snapshot) -> list[int]:
        """DM each armed alert whose line the cheapest on-demand price crossed; re-arm those that went back."""
        alerts = store.list_alerts(self.engine)
        if not alerts:
            return []
        # A bundled snapshot is a baseline, not news: an alert fires on a user's or a live source's price only.
        imports = list_imports(self.engine, until=now)
        baseline = bundled_providers(imports, now)
        now_prices = prices_at(self.engine, now, gpu_ids={a.gpu_id for a in alerts}, imports=imports)
        cheapest = per_gpu_cheapest(p for k, p in now_prices.items() if k.provider_id not in baseline)
        fired: list[int] = []
        for a in alerts:
            alert_id = store.stored_id(a)
            best = cheapest.get(a.gpu_id)
            if best is None or a.last_error in store.PAUSE_REASONS:  # no price, or the workspace is paused
                continue
            line = Decimal(a.usd_per_gpu_hour)
            usd = best.usd_per_gpu_hour
            crossed = usd < line if a.op == "<" else usd > line
            if not crossed and not a.armed:
                store.rearm_alert(self.engine, alert_id)
            elif (crossed and a.armed and store.fire_alert(self.engine, alert_id, usd=usd, now=now)
                  and self._dm_alert(a, best, snapshot)):
                fired.append(alert_id)
        return fired

    def _dm_alert(self, alert: PriceAlert, best: SeriesPrice, snapshot: Snapshot) -> bool:
        from bot.digest.commands import message
        from bot.digest.texts import Usd

        token = self.tokens.bot_token(alert.team_id)
        gpu = snapshot.gpus.get(alert.gpu_id)
        prov = snapshot.providers.get(best.key.provider_id)
        text = message("alert.fired", alert.language, id=alert.short_id, gpu=gpu.name if gpu else alert.gpu_id,
                       usd=Usd(best.usd_per_gpu_hour), provider=prov.name if prov else best.key.provider_id,
                       count=best.key.gpu_count, instance=best.instance_type, op=alert.op,
                       line=Usd(Decimal(alert.usd_per_gpu_hour)))
        try:
            if not token:
                raise LookupError("no_token")
            make_client(token, self.cfg).chat_postMessage(channel=alert.user_id, text=text)
            return True
        except Exception as exc:  # noqa: BLE001  # any failure: classified below, the alert kept
            code = str(exc) if isinstance(exc, LookupError) else slack_error(exc)
            # Transient: arm again so the next tick retries. Permanent: stay quiet, show the error in App Home.
            store.rearm_alert(self.engine, store.stored_id(alert), error=code, armed=code not in PERMANENT_ERRORS)
            return False

    def run_forever(self, *, tick_s: float = 30.0, stop: threading.Event | None = None) -> None:
        stop = stop or threading.Event()
        log.info("scheduler %s started (tick %.0f s)", self.cfg.worker, tick_s)
        while not stop.is_set():
            try:
                report = self.run_once()
                if report.outcomes.keys() - {"not_due", "done"}:
                    log.info("tick: %s", {k: len(v) for k, v in report.outcomes.items()})
            except Exception:  # a broken tick (database restart …) must not stop the clock
                log.exception("scheduler tick failed")
            stop.wait(tick_s)
