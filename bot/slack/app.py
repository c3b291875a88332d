"""The Bolt app factory: Web API client (base URL, retry handlers), single-token or OAuth, listeners."""

from __future__ import annotations

import logging
import re
from concurrent.futures import ThreadPoolExecutor

from slack_bolt import App
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from sqlalchemy import Engine

from bot.settings import Settings, is_oauth
from bot.slack import listeners
from bot.slack.core import Core, PipelineCore, SnapshotHolder, snapshot_holder
from bot.slack.reconnect import ReconnectingInstallationStore
from bot.slack.retries import retry_handlers, use_retrying_respond
from bot.slack.services import Services, utc_now
from knowledge.secret_box import load_box
from knowledge.slack_store import DbInstallationStore, DbOAuthStateStore

log = logging.getLogger(__name__)

LISTENER_THREADS = 16  # answers are CPU-light (ms) but wait on Slack's Web API
# Must match manifest.json (a test compares them). channels/groups:history let a thread
# follow-up be answered without a second mention; the handler only reads threads we answered.
BOT_SCOPES = (
    "app_mentions:read",
    "channels:history",
    "chat:write",
    "commands",
    "files:write",  # price-history charts uploaded with digests (issue 18)
    "groups:history",
    "im:history",
    "im:write",
    "users:read",
)


# A response URL is a credential (whoever has it can post as the app): never in a log line.
RESPONSE_URL = re.compile(r"https?://[^\s/]+/(?:response|commands|actions|services)/\S*")
# Loggers of Slack's libraries that write request bodies or response URLs at INFO.
CHATTY_LOGGERS = ("slack_bolt.RequestVerification", "slack_sdk.webhook.client", "slack_sdk.web.base_client")


class Redacted(logging.Filter):
    """Keep the library's line, without the request body or the response URL in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = RESPONSE_URL.sub("<response URL>", message.split(", body: ", 1)[0])
        if redacted != message:
            record.msg, record.args = redacted + (", body not logged)" if ", body: " in message else ""), None
        return True


def quiet_bolt_bodies() -> None:
    for name in CHATTY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, Redacted) for f in logger.filters):
            logger.addFilter(Redacted())


def web_client(settings: Settings, *, token: str | None) -> WebClient:
    """Every Web API call goes to SLACK_API_URL; Bolt copies base URL and retry handlers per request."""
    return WebClient(
        token=token,
        base_url=settings.slack_api_url,
        retry_handlers=retry_handlers(),
    )


def oauth_stores(settings: Settings, engine: Engine) -> tuple[DbInstallationStore | None, OAuthSettings | None]:
    """Installation store and OAuth settings (many workspaces), or (None, None) for one token."""
    if not (settings.slack_client_id and settings.slack_client_secret):
        return None, None
    box = load_box(settings.secret_keys, settings.secret_key_file)
    installation_store = ReconnectingInstallationStore(engine=engine, client_id=settings.slack_client_id, box=box)
    return installation_store, OAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret,
        scopes=list(BOT_SCOPES),
        installation_store=installation_store,
        state_store=DbOAuthStateStore(engine=engine),
    )


def build_app(
    settings: Settings, *, engine: Engine, core: Core, snapshots: SnapshotHolder | None = None,
    inline: bool = False,
) -> App:
    """The app with every listener; OAuth (many workspaces) when a client id is set, else one token.

    `inline`: the app of an answer worker (HTTP mode). The web process verified the signature and
    acknowledged; here listeners run synchronously and the signature is not checked again (a
    request may wait in the queue longer than Slack's five-minute timestamp window).
    """
    quiet_bolt_bodies()
    installation_store, oauth_settings = oauth_stores(settings, engine)
    # With OAuth the token comes from the installation store per workspace, never from the client.
    client = web_client(settings, token=None if is_oauth(settings) else settings.slack_bot_token)
    app = App(
        client=client,
        signing_secret=settings.slack_signing_secret,
        oauth_settings=oauth_settings,
        installation_store=installation_store,
        request_verification_enabled=not inline,
        # Every listener is ack() on the request thread + a lazy function in the pool (listeners/lazy.py):
        # the 200 goes back at once, without Bolt's 10 ms ack polling of process_before_response=False.
        process_before_response=True,
        listener_executor=ThreadPoolExecutor(max_workers=LISTENER_THREADS, thread_name_prefix="slack"),
    )
    services = Services(
        engine=engine,
        core=core,
        default_language=settings.default_language,
        installation_store=installation_store,
        current_snapshot=snapshots.current if snapshots else lambda: None,
        run_inline=inline,
    )
    app.use(use_retrying_respond)  # response URLs get the Web API's retry handlers too
    listeners.register(app, services)
    return app


def production_engine(settings: Settings) -> Engine:
    """The database, migrated and loaded (knowledge.setup.prepare_database)."""
    from knowledge.setup import prepare_database

    return prepare_database(settings.database_url)


def build_production_app(settings: Settings, *, inline: bool = False, engine: Engine | None = None) -> App:
    """The app on the real pipeline: database prepared, snapshot loaded and watched for new prices."""
    engine = engine or production_engine(settings)
    snapshots = snapshot_holder(engine, stale_after_days=settings.price_stale_days)
    snapshots.start_watching()
    core = PipelineCore(snapshots)
    core.warm_up(utc_now())
    return build_app(settings, engine=engine, core=core, snapshots=snapshots, inline=inline)


def build_oauth_app(settings: Settings) -> App:
    """Bolt for `/slack/install` and `/slack/oauth_redirect` only: no listeners, no snapshot."""
    from knowledge.db import make_engine

    installation_store, oauth_settings = oauth_stores(settings, make_engine(settings.database_url))
    return App(
        client=web_client(settings, token=None),
        signing_secret=settings.slack_signing_secret,
        oauth_settings=oauth_settings,
        installation_store=installation_store,
    )
