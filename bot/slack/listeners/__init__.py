"""Every Slack listener, registered from one place; one small module per surface."""

from __future__ import annotations

from slack_bolt import App

from bot.slack.listeners import actions, command, errors, home, lifecycle, mention, messages
from bot.slack.services import Services


def register(app: App, services: Services) -> None:
    for surface in (command, mention, messages, home, lifecycle, actions, errors):
        surface.register(app, services)
