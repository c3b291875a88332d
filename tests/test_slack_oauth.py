"""Many workspaces: Bolt's OAuth flow against the fake Slack, installations and state in our database."""

from __future__ import annotations

import re

from fake_slack import (
    SIGNING_SECRET,
    AppServer,
    FakeCore,
    FakeSlack,
    get,
    post,
    signed_headers,
    slash_command_body,
)

from bot.settings import load_settings
from bot.slack.app import build_app
from bot.slack.wsgi import wsgi_app
from knowledge.slack_store import DbInstallationStore


def test_install_then_commands_use_the_stored_token(engine) -> None:
    slack = FakeSlack().start()
    settings = load_settings({
        "DATABASE_URL": engine.url.render_as_string(hide_password=False),
        "SLACK_CLIENT_ID": "111.222", "SLACK_CLIENT_SECRET": "shh", "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.api_url,
    })
    server = AppServer(wsgi_app(build_app(settings, engine=engine, core=FakeCore())))
    try:
        status, page, headers = get(server.port, "/slack/install")
        assert status == 200
        # The browser keeps the state cookie Bolt sets and sends it back with the redirect.
        cookie = {"Cookie": {k.lower(): v for k, v in headers.items()}["set-cookie"].split(";")[0]}
        state = re.search(r"state=([\w\-]+)", page).group(1)
        assert "client_id=111.222" in page and "commands" in page
        status, _, _ = get(server.port, f"/slack/oauth_redirect?code=1234.5678&state={state}", cookie)
        assert status == 200
        [access] = slack.api_calls("oauth.v2.access")
        assert access.params["code"] == "1234.5678"
        bot = DbInstallationStore(engine=engine, client_id="111.222").find_bot(enterprise_id=None, team_id="T0TEAM")
        assert bot is not None and bot.bot_token == "xoxe.xoxb-1-rotating" and bot.bot_refresh_token == "xoxe-1-refresh"
        # The state was consumed: replaying the redirect is refused.
        assert get(server.port, f"/slack/oauth_redirect?code=1234.5678&state={state}", cookie)[0] != 200
        body = slash_command_body("price h100", response_url=slack.response_url("o"))
        assert post(server.port, body, signed_headers(body))[0] == 200
        slack.wait_for(lambda calls: any(c.path == "/response/o" for c in calls))
        assert {c.token for c in slack.api_calls("users.info")} == {"xoxe.xoxb-1-rotating"}
    finally:
        server.stop()
        slack.stop()
