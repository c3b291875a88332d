"""SQLModel tables of the Slack app: installations, OAuth state, event dedupe, threads, user prefs."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

# Bolt passes None for "no enterprise" / "no team"; key columns store "" instead, because NULLs
# never collide in a unique constraint and the store must keep one row per workspace.
NO_ID = ""
# Columns that hold credentials: encrypted at rest (knowledge.secret_box), decrypted when read.
SECRET_FIELDS = {
    "slack_installation": ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token", "incoming_webhook_url"),
    "slack_bot": ("bot_token", "bot_refresh_token"),
}


def _when(*, nullable: bool, index: bool = False) -> sa.Column[datetime]:
    return sa.Column(sa.DateTime(timezone=True), nullable=nullable, index=index)


class SlackInstallation(SQLModel, table=True):
    """The latest installation per workspace (and per installing user), as Bolt's OAuth flow saves it."""

    __tablename__ = "slack_installation"
    __table_args__ = (
        sa.UniqueConstraint(
            "client_id", "enterprise_id", "team_id", "user_id", name="uq_slack_installation_key"
        ),
    )
    id: int | None = Field(default=None, primary_key=True)
    client_id: str
    app_id: str | None = None
    enterprise_id: str = NO_ID
    enterprise_name: str | None = None
    enterprise_url: str | None = None
    team_id: str = NO_ID
    team_name: str | None = None
    user_id: str
    bot_token: str | None = None
    bot_id: str | None = None
    bot_user_id: str | None = None
    bot_scopes: str | None = None
    bot_refresh_token: str | None = None
    bot_token_expires_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))
    user_token: str | None = None
    user_scopes: str | None = None
    user_refresh_token: str | None = None
    user_token_expires_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))
    incoming_webhook_url: str | None = None
    incoming_webhook_channel: str | None = None
    incoming_webhook_channel_id: str | None = None
    incoming_webhook_configuration_url: str | None = None
    is_enterprise_install: bool = False
    token_type: str | None = None
    installed_at: datetime = Field(sa_column=_when(nullable=False))


class SlackBot(SQLModel, table=True):
    """The bot token of one workspace (or org-wide install); rotated tokens replace the row."""

    __tablename__ = "slack_bot"
    __table_args__ = (
        sa.UniqueConstraint("client_id", "enterprise_id", "team_id", name="uq_slack_bot_key"),
    )
    id: int | None = Field(default=None, primary_key=True)
    client_id: str
    app_id: str | None = None
    enterprise_id: str = NO_ID
    enterprise_name: str | None = None
    team_id: str = NO_ID
    team_name: str | None = None
    bot_token: str
    bot_id: str | None = None
    bot_user_id: str | None = None
    bot_scopes: str | None = None
    bot_refresh_token: str | None = None
    bot_token_expires_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))
    is_enterprise_install: bool = False
    installed_at: datetime = Field(sa_column=_when(nullable=False))


class SlackOAuthState(SQLModel, table=True):
    """A one-time OAuth `state` value, consumed by the redirect (CSRF protection)."""

    __tablename__ = "slack_oauth_state"
    state: str = Field(primary_key=True, max_length=200)
    expires_at: datetime = Field(sa_column=_when(nullable=False, index=True))


class SlackDelivery(SQLModel, table=True):
    """A claimed delivery key (event id, or channel+ts of a message): the first claim answers."""

    __tablename__ = "slack_delivery"
    key: str = Field(primary_key=True, max_length=200)
    claimed_at: datetime = Field(sa_column=_when(nullable=False, index=True))
    owner: str | None = Field(default=None, max_length=200)  # the queued request that claimed it (re-runs pass)


class SlackThread(SQLModel, table=True):
    """The last request answered in a thread (or DM), so a follow-up there can refine it."""

    __tablename__ = "slack_thread"
    team_id: str = Field(primary_key=True, max_length=32)
    channel_id: str = Field(primary_key=True, max_length=32)
    thread_ts: str = Field(primary_key=True, max_length=32)
    user_id: str
    language: str
    state_json: str
    updated_at: datetime = Field(sa_column=_when(nullable=False, index=True))


class SlackUserPref(SQLModel, table=True):
    """A user's language override and the cached locale Slack reports for them."""

    __tablename__ = "slack_user_pref"
    team_id: str = Field(primary_key=True, max_length=32)
    user_id: str = Field(primary_key=True, max_length=32)
    language_override: str | None = None
    slack_locale: str | None = None
    locale_checked_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))


class SlackRequest(SQLModel, table=True):
    """One accepted Slack request on the answer queue: the dedupe record and the durable copy of its job.

    `key` is Slack's own id (event id, or the trigger id of a command or button) with the team:
    a retried or re-delivered request finds its row and is not answered again. The body is
    stored encrypted (knowledge.secret_box); the queue itself carries only the key.
    """

    __tablename__ = "slack_request"
    key: str = Field(primary_key=True, max_length=200)
    team_id: str = Field(max_length=32, index=True)
    kind: str = Field(max_length=16)  # event, command, action, other
    mode: str = Field(max_length=16)  # http or socket_mode: how the worker's Bolt app reads the body
    body: str  # encrypted
    headers_json: str  # content type and Slack's retry headers (no secret)
    state: str = Field(max_length=16, index=True)  # queued, running, delivering, retry, done, failed
    attempts: int = 0
    worker_id: str | None = Field(default=None, max_length=64)
    not_before: datetime | None = Field(default=None, sa_column=_when(nullable=True))
    slot_at: float | None = None  # a reserved channel posting slot (epoch seconds), kept across a re-run
    outcome: str | None = Field(default=None, max_length=64)
    created_at: datetime = Field(sa_column=_when(nullable=False))
    updated_at: datetime = Field(sa_column=_when(nullable=False, index=True))


class QueueWorker(SQLModel, table=True):
    """A running answer worker and its heartbeat: claims of a worker that stopped beating are re-queued."""

    __tablename__ = "queue_worker"
    id: str = Field(primary_key=True, max_length=64)
    host: str = Field(max_length=255)
    pid: int
    started_at: datetime = Field(sa_column=_when(nullable=False))
    beat_at: datetime = Field(sa_column=_when(nullable=False, index=True))


class SlackRateSlot(SQLModel, table=True):
    """The next free posting time (epoch seconds) of one rate-limited key (channel, or team + method)."""

    __tablename__ = "slack_rate_slot"
    key: str = Field(primary_key=True, max_length=200)
    next_at: float
