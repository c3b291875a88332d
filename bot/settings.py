"""Settings read from the environment once, validated, with a message naming what is wrong."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

DEFAULT_SLACK_API_URL = "https://slack.com/api/"
SUPPORTED_DB_SCHEMES = ("sqlite", "postgresql", "postgresql+psycopg", "postgres")
SUPPORTED_QUEUE_SCHEMES = ("sqlite", "redis", "rediss", "postgresql", "postgresql+psycopg", "postgres")
DEFAULT_QUEUE_NAME = "gpu-advisor"


class SettingsError(ValueError):
    """The environment is missing or malforms a setting; the message names which and why."""


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str
    slack_bot_token: str | None
    slack_signing_secret: str | None
    slack_app_token: str | None
    slack_client_id: str | None
    slack_client_secret: str | None
    slack_api_url: str
    default_language: str
    port: int
    log_level: str
    # Prices older than this many days carry a notice on cards (and `prices status` marks them); issue 18.
    price_stale_days: int = 14
    # The clock refreshes live prices (gpuhunt) this often; 0 = never.
    price_refresh_hours: float = 6.0
    # The answer queue (bot/queue): a SQLite file next to the database by default, the same
    # PostgreSQL when DATABASE_URL is PostgreSQL, or Redis (redis://HOST:PORT/DB).
    queue_url: str = ""
    queue_name: str = DEFAULT_QUEUE_NAME  # huey's queue name: Redis key prefix, PostgreSQL table prefix
    # Fernet keys for secrets at rest, newest first (older ones only decrypt: key rotation).
    secret_keys: tuple[str, ...] = ()
    secret_key_file: str = ""  # the embedded default's generated key (owner-only), when SECRET_KEYS is unset


def default_database_url(env: Mapping[str, str]) -> str:
    """A SQLite file under the user's data directory: nothing to install or set up."""
    base = Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'gpu-advisor' / 'gpu_advisor.db'}"


def default_queue_url(database_url: str) -> str:
    """Beside a SQLite database, a SQLite queue file; on PostgreSQL, the same database."""
    if database_url.startswith("sqlite:///"):
        path = Path(database_url[len("sqlite:///") :])
        return f"sqlite:///{path.with_name(path.stem + '-queue.db')}"
    return database_url


def normalise_database_url(url: str) -> str:
    """Map `postgres://` and `postgresql://` to the psycopg 3 driver SQLAlchemy needs."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read and validate every setting; raise SettingsError naming each problem found."""
    env = os.environ if env is None else env
    problems: list[str] = []

    database_url = env.get("DATABASE_URL") or default_database_url(env)
    scheme = urlparse(database_url).scheme
    if scheme not in SUPPORTED_DB_SCHEMES:
        problems.append(
            f"DATABASE_URL has scheme {scheme!r}; use sqlite:///PATH or postgresql://USER@HOST/DB"
        )

    api_url = env.get("SLACK_API_URL") or DEFAULT_SLACK_API_URL
    if urlparse(api_url).scheme not in ("http", "https"):
        problems.append(f"SLACK_API_URL must be an http(s) URL, got {api_url!r}")
    if not api_url.endswith("/"):
        api_url += "/"

    port_text = env.get("PORT", "3000")
    port = 0
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        problems.append(f"PORT must be a number from 1 to 65535, got {port_text!r}")
    else:
        port = int(port_text)

    bot_token = env.get("SLACK_BOT_TOKEN") or None
    if bot_token and not bot_token.startswith("xoxb-"):
        problems.append("SLACK_BOT_TOKEN must start with 'xoxb-'")
    app_token = env.get("SLACK_APP_TOKEN") or None
    if app_token and not app_token.startswith("xapp-"):
        problems.append("SLACK_APP_TOKEN must start with 'xapp-'")
    client_id = env.get("SLACK_CLIENT_ID") or None
    client_secret = env.get("SLACK_CLIENT_SECRET") or None
    if bool(client_id) != bool(client_secret):
        problems.append("SLACK_CLIENT_ID and SLACK_CLIENT_SECRET must be set together (OAuth)")

    language = env.get("GPU_ADVISOR_LANGUAGE", "en")
    level = env.get("LOG_LEVEL", "INFO").upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        problems.append(f"LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, got {level!r}")

    stale_days = _bounded_number(env, "PRICE_STALE_DAYS", "14", 1, 3650, problems, whole=True)
    refresh_hours = _bounded_number(env, "PRICE_REFRESH_HOURS", "6", 0, 24 * 30, problems, whole=False)
    queue_url = env.get("QUEUE_URL") or default_queue_url(database_url)
    if urlparse(queue_url).scheme not in SUPPORTED_QUEUE_SCHEMES:
        problems.append(f"QUEUE_URL has scheme {urlparse(queue_url).scheme!r}; use sqlite:///PATH, "
                        "redis://HOST:PORT/DB or postgresql://USER@HOST/DB")
    queue_name = env.get("QUEUE_NAME") or DEFAULT_QUEUE_NAME
    if not queue_name.replace("-", "").replace("_", "").isalnum():
        problems.append(f"QUEUE_NAME may hold letters, digits, '-' and '_' only, got {queue_name!r}")
    from knowledge.secret_box import default_secret_key_file, parse_secret_keys

    secret_keys = parse_secret_keys(env.get("SECRET_KEYS", ""), problems)

    if problems:
        raise SettingsError("invalid settings:\n  - " + "\n  - ".join(problems))
    return Settings(
        database_url=normalise_database_url(database_url),
        slack_bot_token=bot_token,
        slack_signing_secret=env.get("SLACK_SIGNING_SECRET") or None,
        slack_app_token=app_token,
        slack_client_id=client_id,
        slack_client_secret=client_secret,
        slack_api_url=api_url,
        default_language=language,
        port=port,
        log_level=level,
        price_stale_days=int(stale_days),
        price_refresh_hours=refresh_hours,
        queue_url=queue_url,
        queue_name=queue_name,
        secret_keys=secret_keys,
        secret_key_file=env.get("SECRET_KEY_FILE") or default_secret_key_file(database_url, env),
    )


def _bounded_number(env: Mapping[str, str], name: str, default: str, low: float, high: float, problems: list[str],
                    *, whole: bool) -> float:
    """A numeric setting within [low, high]; a problem naming the variable otherwise (the default is returned)."""
    text = env.get(name, default).strip()
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high or (whole and value != int(value)):
        kind = "a whole number" if whole else "a number"
        problems.append(f"{name} must be {kind} from {low:g} to {high:g}, got {text!r}")
        return float(default)
    return value


def is_oauth(settings: Settings) -> bool:
    """Many workspaces (OAuth install) rather than one bot token."""
    return bool(settings.slack_client_id and settings.slack_client_secret)


def require_slack_http(settings: Settings) -> None:
    """HTTP mode needs a signing secret and either a bot token or OAuth credentials."""
    missing = []
    if not settings.slack_signing_secret:
        missing.append("SLACK_SIGNING_SECRET")
    if not (settings.slack_bot_token or settings.slack_client_id):
        missing.append("SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID/SLACK_CLIENT_SECRET (OAuth)")
    if missing:
        raise SettingsError("HTTP mode needs: " + ", ".join(missing))


def require_slack_socket(settings: Settings) -> None:
    """Socket Mode needs an app-level token and a bot token."""
    missing = [
        name
        for name, value in (
            ("SLACK_APP_TOKEN", settings.slack_app_token),
            ("SLACK_BOT_TOKEN", settings.slack_bot_token),
        )
        if not value
    ]
    if missing:
        raise SettingsError("Socket Mode needs: " + ", ".join(missing))
