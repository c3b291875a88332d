"""Settings are read once from the environment and validated with messages naming the variable."""

import pytest

from bot.settings import SettingsError, load_settings, require_slack_http, require_slack_socket


def test_defaults_need_nothing(tmp_path):
    s = load_settings({"XDG_DATA_HOME": str(tmp_path)})
    assert s.database_url == f"sqlite:///{tmp_path}/gpu-advisor/gpu_advisor.db"
    assert s.slack_api_url == "https://slack.com/api/"
    assert s.port == 3000


def test_postgres_urls_get_the_psycopg_driver():
    for given in ("postgres://u@h/db", "postgresql://u@h/db"):
        assert load_settings({"DATABASE_URL": given}).database_url == "postgresql+psycopg://u@h/db"


def test_api_url_gets_trailing_slash():
    assert load_settings({"SLACK_API_URL": "http://127.0.0.1:9/api"}).slack_api_url == "http://127.0.0.1:9/api/"


@pytest.mark.parametrize(
    "env, named",
    [
        ({"DATABASE_URL": "mysql://x"}, "DATABASE_URL"),
        ({"PORT": "http"}, "PORT"),
        ({"PORT": "70000"}, "PORT"),
        ({"SLACK_BOT_TOKEN": "xoxp-user"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_APP_TOKEN": "xoxb-1"}, "SLACK_APP_TOKEN"),
        ({"SLACK_CLIENT_ID": "1.2"}, "SLACK_CLIENT_SECRET"),
        ({"SLACK_API_URL": "ftp://x"}, "SLACK_API_URL"),
        ({"LOG_LEVEL": "loud"}, "LOG_LEVEL"),
    ],
)
def test_malformed_settings_are_named(env, named):
    with pytest.raises(SettingsError, match=named):
        load_settings(env)


def test_all_problems_reported_at_once():
    with pytest.raises(SettingsError) as info:
        load_settings({"PORT": "x", "DATABASE_URL": "mysql://x"})
    assert "PORT" in str(info.value) and "DATABASE_URL" in str(info.value)


def test_slack_modes_name_what_is_missing():
    with pytest.raises(SettingsError, match="SLACK_SIGNING_SECRET"):
        require_slack_http(load_settings({}))
    with pytest.raises(SettingsError, match="SLACK_APP_TOKEN"):
        require_slack_socket(load_settings({"SLACK_BOT_TOKEN": "xoxb-1"}))
    require_slack_http(load_settings({"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1"}))
