"""Slack state on our database: Bolt installation/OAuth-state stores, delivery dedupe, threads, prefs."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from slack_sdk.oauth.state_store import OAuthStateStore
from sqlalchemy import Engine, delete, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel, col

from knowledge.db import as_utc
from knowledge.secret_box import SecretBox, box_for_database
from knowledge.slack_tables import (
    NO_ID,
    SECRET_FIELDS,
    SlackBot,
    SlackDelivery,
    SlackInstallation,
    SlackOAuthState,
    SlackThread,
    SlackUserPref,
)
from knowledge.tables import ImportRun

log = logging.getLogger(__name__)

DELIVERY_KEEP = timedelta(days=2)  # Slack retries an event for about an hour; keep a margin
OAUTH_STATE_TTL_S = 600


def _key(value: str | None) -> str:
    return value or NO_ID


def _unkey(value: str) -> str | None:
    return value or None


def _fields(values: Mapping[str, object], model: type[SQLModel]) -> dict[str, object]:
    names = set(model.model_fields) - {"id"}
    return {name: value for name, value in values.items() if name in names}


class DbInstallationStore(InstallationStore):
    """Bolt's installation store on our tables: the latest install per workspace, rotated tokens saved."""

    def __init__(self, *, engine: Engine, client_id: str, box: SecretBox | None = None) -> None:
        self.engine = engine
        self.client_id = client_id
        # Tokens are encrypted with the keys the settings name (SECRET_KEYS, else the key file).
        self.box = box or box_for_database(engine.url.render_as_string(hide_password=False))

    @property
    def logger(self) -> logging.Logger:
        return log

    def save(self, installation: Installation) -> None:
        self._save(SlackInstallation, installation.to_dict(), installation.enterprise_id, installation.team_id,
                   user_id=installation.user_id)
        if installation.bot_token:
            self.save_bot(installation.to_bot())

    def save_bot(self, bot: Bot) -> None:
        self._save(SlackBot, bot.to_dict(), bot.enterprise_id, bot.team_id)

    def _save(self, model: type[SQLModel], values: dict[str, object], enterprise_id: str | None, team_id: str | None,
              **extra_key: str | None) -> None:
        """Upsert one installation or bot row, keyed by app, enterprise, team (and user for installations)."""
        values.update(client_id=self.client_id, enterprise_id=_key(enterprise_id), team_id=_key(team_id))
        for name in SECRET_FIELDS[str(model.__tablename__)]:
            if isinstance(values.get(name), str):
                values[name] = self.box.encrypt(str(values[name]))
        key = {name: values[name] for name in ("client_id", "enterprise_id", "team_id")} | extra_key
        self._upsert(model, key, _fields(values, model))

    def _upsert(self, model: type[SQLModel], key: Mapping[str, object], values: Mapping[str, object]) -> None:
        for attempt in (1, 2):  # a concurrent insert of the same key: the second try updates it
            try:
                with Session(self.engine) as session:
                    row = session.execute(select(model).filter_by(**key)).scalars().first()
                    if row is None:
                        session.add(model(**values))
                    else:
                        for name, value in values.items():
                            setattr(row, name, value)
                    session.commit()
                return
            except IntegrityError:
                if attempt == 2:
                    raise

    def find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        if is_enterprise_install:
            team_id = None
        with Session(self.engine) as session:
            row = session.execute(
                select(SlackBot).filter_by(
                    client_id=self.client_id, enterprise_id=_key(enterprise_id), team_id=_key(team_id)
                )
            ).scalars().first()
        if row is None:
            return None
        return Bot(
            app_id=row.app_id,
            enterprise_id=_unkey(row.enterprise_id),
            enterprise_name=row.enterprise_name,
            team_id=_unkey(row.team_id),
            team_name=row.team_name,
            bot_token=self.box.decrypt(row.bot_token),
            bot_id=row.bot_id or "",
            bot_user_id=row.bot_user_id or "",
            bot_scopes=row.bot_scopes or "",
            bot_refresh_token=self.box.decrypt_optional(row.bot_refresh_token),
            bot_token_expires_at=as_utc(row.bot_token_expires_at),
            is_enterprise_install=row.is_enterprise_install,
            installed_at=as_utc(row.installed_at),
        )

    def find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        if is_enterprise_install:
            team_id = None
        where = dict(client_id=self.client_id, enterprise_id=_key(enterprise_id), team_id=_key(team_id))
        if user_id is not None:
            where["user_id"] = user_id
        with Session(self.engine) as session:
            query = select(SlackInstallation).filter_by(**where)
            row = session.execute(
                query.order_by(col(SlackInstallation.installed_at).desc())
            ).scalars().first()
        if row is None:
            return None
        installation = _installation_from_row(row, self.box)
        bot = self.find_bot(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=is_enterprise_install
        )
        if bot is not None and bot.bot_token != installation.bot_token:
            # A user's row keeps the bot token of its day; the bot row holds the current one.
            installation.bot_token = bot.bot_token
            installation.bot_id = bot.bot_id
            installation.bot_user_id = bot.bot_user_id
            installation.bot_scopes = bot.bot_scopes
            installation.bot_refresh_token = bot.bot_refresh_token
            installation.bot_token_expires_at = bot.bot_token_expires_at
        return installation

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self._delete(SlackBot, enterprise_id=enterprise_id, team_id=team_id)

    def delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        self._delete(SlackInstallation, enterprise_id=enterprise_id, team_id=team_id, user_id=user_id)

    def delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.delete_bot(enterprise_id=enterprise_id, team_id=team_id)
        self.delete_installation(enterprise_id=enterprise_id, team_id=team_id)

    def _delete(
        self,
        model: type[SQLModel],
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
    ) -> None:
        where = dict(client_id=self.client_id, enterprise_id=_key(enterprise_id), team_id=_key(team_id))
        if user_id is not None:
            where["user_id"] = user_id
        with self.engine.begin() as conn:
            conn.execute(delete(model).filter_by(**where))
        log.info("deleted %s for enterprise=%s team=%s", model.__tablename__, enterprise_id, team_id)


def _installation_from_row(row: SlackInstallation, box: SecretBox) -> Installation:
    return Installation(
        app_id=row.app_id,
        enterprise_id=_unkey(row.enterprise_id),
        enterprise_name=row.enterprise_name,
        enterprise_url=row.enterprise_url,
        team_id=_unkey(row.team_id),
        team_name=row.team_name,
        bot_token=box.decrypt_optional(row.bot_token),
        bot_id=row.bot_id,
        bot_user_id=row.bot_user_id,
        bot_scopes=row.bot_scopes or "",
        bot_refresh_token=box.decrypt_optional(row.bot_refresh_token),
        bot_token_expires_at=as_utc(row.bot_token_expires_at),
        user_id=row.user_id,
        user_token=box.decrypt_optional(row.user_token),
        user_scopes=row.user_scopes or "",
        user_refresh_token=box.decrypt_optional(row.user_refresh_token),
        user_token_expires_at=as_utc(row.user_token_expires_at),
        incoming_webhook_url=box.decrypt_optional(row.incoming_webhook_url),
        incoming_webhook_channel=row.incoming_webhook_channel,
        incoming_webhook_channel_id=row.incoming_webhook_channel_id,
        incoming_webhook_configuration_url=row.incoming_webhook_configuration_url,
        is_enterprise_install=row.is_enterprise_install,
        token_type=row.token_type,
        installed_at=as_utc(row.installed_at),
    )


class DbOAuthStateStore(OAuthStateStore):
    """One-time OAuth `state` values in the database, so any process can finish the install."""

    def __init__(self, *, engine: Engine, expiration_seconds: int = OAUTH_STATE_TTL_S) -> None:
        self.engine = engine
        self.expiration_seconds = expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return log

    def issue(self, *args: object, **kwargs: object) -> str:
        state = secrets.token_urlsafe(24)
        expires_at = datetime.now(UTC) + timedelta(seconds=self.expiration_seconds)
        with Session(self.engine) as session:
            session.add(SlackOAuthState(state=state_digest(state), expires_at=expires_at))
            session.commit()
        return state

    def consume(self, state: str) -> bool:
        now = datetime.now(UTC)
        state = state_digest(state)
        with self.engine.begin() as conn:
            row = conn.execute(
                select(col(SlackOAuthState.expires_at)).where(col(SlackOAuthState.state) == state)
            ).first()
            conn.execute(delete(SlackOAuthState).where(col(SlackOAuthState.state) == state))
            conn.execute(delete(SlackOAuthState).where(col(SlackOAuthState.expires_at) < now))
        return row is not None and as_utc(row[0]) > now


def state_digest(state: str) -> str:
    """An OAuth `state` is kept as its SHA-256: the database never holds a usable value."""
    return hashlib.sha256(state.encode("utf-8")).hexdigest()


def claim_delivery(engine: Engine, key: str, *, now: datetime, owner: str | None = None) -> bool:
    """Record `key` (an event id, or team+channel+ts of a message); True only for the first claim.

    The primary key makes this hold across processes: a retried event or the second of
    `message` + `app_mention` for one message loses the insert race and is not answered again.
    `owner` (the queued request's key) wins again: a re-run of the request that claimed it.
    """
    try:
        with engine.begin() as conn:
            conn.execute(insert(SlackDelivery).values(key=key[:200], claimed_at=now, owner=owner))
    except IntegrityError:
        if owner is None:
            return False
        with engine.connect() as conn:
            held_by = conn.execute(select(col(SlackDelivery.owner)).where(col(SlackDelivery.key) == key[:200])).scalar()
        return held_by == owner
    return True


def prune_deliveries(engine: Engine, *, now: datetime) -> int:
    """Forget claims and finished queue records older than any retry Slack would still send; rows removed."""
    from knowledge.slack_requests import prune_requests

    with engine.begin() as conn:
        result = conn.execute(delete(SlackDelivery).where(col(SlackDelivery.claimed_at) < now - DELIVERY_KEEP))
    return (result.rowcount or 0) + prune_requests(engine, now=now)


@dataclass(frozen=True, slots=True)
class ThreadState:
    """The previous request in a thread: who asked, in which language, and the answerer's state."""

    user_id: str
    language: str
    state: dict[str, Any]  # a JSON object as decoded (values: bot.answer.actions.JsonValue, which knowledge may not import)
    updated_at: datetime


def find_thread_state(
    engine: Engine, *, team_id: str, channel_id: str, thread_ts: str
) -> ThreadState | None:
    with Session(engine) as session:
        row = session.get(SlackThread, (team_id, channel_id, thread_ts))
    if row is None:
        return None
    return ThreadState(
        user_id=row.user_id,
        language=row.language,
        state=json.loads(row.state_json),
        updated_at=as_utc(row.updated_at),
    )


def save_thread_state(
    engine: Engine, *, team_id: str, channel_id: str, thread_ts: str, thread: ThreadState
) -> None:
    state_json = json.dumps(thread.state, ensure_ascii=False, sort_keys=True, default=str)
    key = (team_id, channel_id, thread_ts)
    for attempt in (1, 2):
        try:
            with Session(engine) as session:
                row = session.get(SlackThread, key) or SlackThread(
                    team_id=team_id, channel_id=channel_id, thread_ts=thread_ts,
                    user_id=thread.user_id, language=thread.language, state_json=state_json,
                    updated_at=thread.updated_at,
                )
                row.user_id, row.language = thread.user_id, thread.language
                row.state_json, row.updated_at = state_json, thread.updated_at
                session.add(row)
                session.commit()
            return
        except IntegrityError:
            if attempt == 2:
                raise


@dataclass(frozen=True, slots=True)
class UserPref:
    language_override: str | None
    slack_locale: str | None
    locale_checked_at: datetime | None


def find_user_pref(engine: Engine, *, team_id: str, user_id: str) -> UserPref | None:
    with Session(engine) as session:
        row = session.get(SlackUserPref, (team_id, user_id))
    if row is None:
        return None
    return UserPref(row.language_override, row.slack_locale, as_utc(row.locale_checked_at))


class UserPrefChanges(TypedDict, total=False):
    """The fields of a user's preferences that `save_user_pref` may set (each one optional)."""

    language_override: str | None
    slack_locale: str | None
    locale_checked_at: datetime | None


def save_user_pref(engine: Engine, *, team_id: str, user_id: str, **changes: Unpack[UserPrefChanges]) -> None:
    """Set `language_override`, `slack_locale` and/or `locale_checked_at` for one user."""
    unknown = set(changes) - {"language_override", "slack_locale", "locale_checked_at"}
    if unknown:
        raise ValueError(f"unknown user preference fields: {sorted(unknown)}")
    for attempt in (1, 2):
        try:
            with Session(engine) as session:
                row = session.get(SlackUserPref, (team_id, user_id)) or SlackUserPref(
                    team_id=team_id, user_id=user_id
                )
                for name, value in changes.items():
                    setattr(row, name, value)
                session.add(row)
                session.commit()
            return
        except IntegrityError:
            if attempt == 2:
                raise


def forget_workspace(engine: Engine, *, team_id: str) -> None:
    """Drop a workspace's threads and preferences once it uninstalls the app."""
    with engine.begin() as conn:
        conn.execute(delete(SlackThread).where(col(SlackThread.team_id) == team_id))
        conn.execute(delete(SlackUserPref).where(col(SlackUserPref.team_id) == team_id))


def prices_version(engine: Engine) -> int | None:
    """The newest price import's id: a long-running process reloads its snapshot when it moves."""
    with engine.connect() as conn:
        return conn.execute(select(func.max(col(ImportRun.id)))).scalar()
