"""`gpu-advisor ask`: terminal text with bars, Slack JSON, Block Kit Builder link, JSON Lines from stdin."""

from __future__ import annotations

import io
import json
from typing import Any
from urllib.parse import unquote

import pytest

from bot.cli import main
from bot.cli.ask import BLOCK_KIT_BUILDER
from bot.render.limits import check_message


@pytest.fixture
def cli_db(loaded_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", loaded_engine.url.render_as_string(hide_password=False))


def test_terminal_answer_has_bars(cli_db: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "fine-tune 13B with QLoRA on a budget"]) == 0
    out = capsys.readouterr().out
    assert "13B · QLoRA" in out and "█" in out and "```" not in out and "&lt;" not in out


def test_json_is_the_slack_message(cli_db: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "price 4090", "--json", "--lang", "de"]) == 0
    message = json.loads(capsys.readouterr().out)
    # The Slack message plus the serving issue's contract keys: the parse and, for advice only, the result.
    assert set(message) == {"text", "blocks", "parsed", "result"}
    assert check_message({"text": message["text"], "blocks": message["blocks"]}) == []
    assert message["parsed"]["intent"] == "price" and message["result"] is None
    assert "ab" in message["text"]  # German fallback ("…: ab 0,23 $/GPU-Std.")


def test_preview_url_encodes_the_blocks(cli_db: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "specs L40S", "--preview-url"]) == 0
    link = capsys.readouterr().out.strip().splitlines()[-1]
    assert link.startswith(BLOCK_KIT_BUILDER)
    assert json.loads(unquote(link[len(BLOCK_KIT_BUILDER):]))["blocks"][0]["type"] == "header"


def test_stdin_gives_json_lines(cli_db: None, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("price 4090\n\nQLoRAで13Bをファインチューニングしたい\n"))
    assert main(["ask", "-"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["language"] for r in rows] == ["en", "ja"]
    assert all(check_message({"text": r["text"], "blocks": r["blocks"]}) == [] for r in rows)
