"""Secrets at rest: Slack tokens encrypted with Fernet keys from the environment or an owner-only key file,
rotation with MultiFernet, a clear start-up error when the keys cannot decrypt what is stored."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.oauth.installation_store import Installation
from sqlalchemy import select, text

from bot.settings import SettingsError, load_settings
from knowledge.secret_box import SecretBox, SecretKeyError, load_box, new_key, read_key_file
from knowledge.slack_secrets import check_secrets, rotate_secrets
from knowledge.slack_store import DbInstallationStore, DbOAuthStateStore
from knowledge.slack_tables import SlackBot, SlackInstallation, SlackOAuthState

TOKENS = {"bot_token": "xoxb-1-secret-bot", "bot_refresh_token": "xoxe-1-refresh-bot",
          "user_token": "xoxp-1-secret-user", "user_refresh_token": "xoxe-1-refresh-user"}


def _install(store: DbInstallationStore) -> None:
    store.save(Installation(app_id="A0APP", team_id="T0TEAM", user_id="U0ALICE", bot_id="B0BOT", bot_user_id="U0BOT",
                            bot_scopes="chat:write", user_scopes="search:read", installed_at=time.time(),
                            incoming_webhook_url="https://hooks.slack.com/services/T0/B0/secret", **TOKENS))


def _stored(engine: Any) -> str:
    with engine.connect() as conn:
        rows = [str(tuple(r)) for model in (SlackInstallation, SlackBot) for r in conn.execute(select(model))]
    return "\n".join(rows)


def test_tokens_are_encrypted_at_rest_and_read_back_in_clear(engine: Any) -> None:
    store = DbInstallationStore(engine=engine, client_id="111.222", box=SecretBox([new_key()], source="test"))
    _install(store)
    raw = _stored(engine)
    for secret in (*TOKENS.values(), "hooks.slack.com"):
        assert secret not in raw
    assert raw.count("fernet:") >= 7  # 5 installation columns + 2 bot columns
    installation = store.find_installation(enterprise_id=None, team_id="T0TEAM")
    assert installation is not None and {k: getattr(installation, k) for k in TOKENS} == TOKENS
    bot = store.find_bot(enterprise_id=None, team_id="T0TEAM")
    assert bot is not None and bot.bot_token == TOKENS["bot_token"]


def test_keys_rotate_new_first_then_the_old_one_can_go(engine: Any) -> None:
    old, new = new_key(), new_key()
    _install(DbInstallationStore(engine=engine, client_id="111.222", box=SecretBox([old], source="test")))
    before = _stored(engine)
    both = SecretBox([new, old], source="test")
    assert check_secrets(engine, both) == 0  # nothing in clear
    assert rotate_secrets(engine, both) == 7
    assert _stored(engine) != before
    only_new = DbInstallationStore(engine=engine, client_id="111.222", box=SecretBox([new], source="test"))
    installation = only_new.find_installation(enterprise_id=None, team_id="T0TEAM")
    assert installation is not None and installation.user_token == TOKENS["user_token"]
    with pytest.raises(SecretKeyError, match="cannot decrypt"):
        check_secrets(engine, SecretBox([old], source="test"))


def test_tokens_stored_in_clear_before_encryption_are_encrypted_at_start(engine: Any) -> None:
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO slack_bot (client_id, enterprise_id, team_id, bot_token, is_enterprise_install, "
                          "installed_at) VALUES ('111.222', '', 'T0OLD', 'xoxb-legacy-clear', false, '2025-01-01')"))
    box = SecretBox([new_key()], source="test")
    assert check_secrets(engine, box) == 1
    assert "xoxb-legacy-clear" not in _stored(engine)
    bot = DbInstallationStore(engine=engine, client_id="111.222", box=box).find_bot(enterprise_id=None, team_id="T0OLD")
    assert bot is not None and bot.bot_token == "xoxb-legacy-clear"


def test_oauth_state_is_kept_as_a_digest(engine: Any) -> None:
    states = DbOAuthStateStore(engine=engine)
    state = states.issue()
    with engine.connect() as conn:
        stored = conn.execute(select(SlackOAuthState.state)).scalars().all()
    assert stored and state not in stored
    assert states.consume(state) and not states.consume(state)


def test_the_generated_key_file_is_owner_only_and_a_shared_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secret.key"
    box = load_box((), str(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert box.decrypt(box.encrypt("xoxb-x")) == "xoxb-x"
    assert load_box((), str(path)) is box  # one per process
    path.chmod(0o644)
    with pytest.raises(SecretKeyError, match="chmod 600"):
        read_key_file(path, create=False)


def test_a_malformed_key_in_the_environment_is_named_but_never_printed() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({"SECRET_KEYS": f"{new_key()},not-a-key-zzz"})
    assert "SECRET_KEYS: key 2 of 2" in str(caught.value) and "not-a-key-zzz" not in str(caught.value)


def test_start_up_with_keys_that_cannot_decrypt_the_tokens_stops_with_a_clear_message(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'app.db'}"
    right, wrong = new_key(), new_key()
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEYS": right, "LOG_LEVEL": "WARNING"}
    command = [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())"]
    done = subprocess.run([*command, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    from knowledge.db import make_engine

    engine = make_engine(url)
    _install(DbInstallationStore(engine=engine, client_id="111.222", box=SecretBox([right], source="test")))
    engine.dispose()
    ok = subprocess.run([*command, "secrets", "check"], env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "decrypt the stored tokens" in ok.stdout, ok.stderr
    bad = subprocess.run([*command, "secrets", "check"], env={**env, "SECRET_KEYS": wrong}, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 1
    assert "cannot decrypt" in bad.stderr and "SECRET_KEYS" in bad.stderr and "Traceback" not in bad.stderr
    assert wrong not in bad.stderr and right not in bad.stderr
