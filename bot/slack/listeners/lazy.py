"""Ack first, work after: every listener is an `ack()` plus a lazy function guarded by the error reply."""

from __future__ import annotations

from collections.abc import Callable

from slack_bolt import Ack, BoltContext, Respond
from slack_sdk import WebClient

from bot.slack.listeners.errors import handle_error
from bot.slack.services import Services

Handler = Callable[..., None]  # a listener: keyword arguments as Bolt names them (payload, body, context …)


def acknowledge(ack: Ack) -> None:
    """Answer Slack's HTTP request at once, on the request thread (no polling delay, well under 3 s)."""
    ack()


def lazy(handler: Handler, services: Services) -> Callable[..., None]:
    """The handler run in Bolt's worker pool; a failure is logged and answered in the user's language.

    Bolt only logs exceptions of lazy functions, so the error reply is wired here, in one place.
    """

    def run(payload: dict[str, object], body: dict[str, object], context: BoltContext,
            client: WebClient, respond: Respond | None) -> None:
        try:
            handler(payload=payload, body=body, context=context, client=client, respond=respond, services=services)
        except Exception as error:  # noqa: BLE001  (the one error boundary of every listener)
            handle_error(error, body, context, client, respond, services=services)

    return run


def inline(handler: Handler, services: Services) -> Callable[..., None]:
    """In an answer worker: the web process has acknowledged already; run the handler right here."""
    guarded = lazy(handler, services)

    def run(ack: Ack, payload: dict[str, object], body: dict[str, object], context: BoltContext,
            client: WebClient, respond: Respond | None) -> None:
        ack()  # a no-op for Slack (answered long ago), but Bolt expects every listener to ack
        guarded(payload=payload, body=body, context=context, client=client, respond=respond)

    return run


def register_lazy(decorator: Callable[..., object], handler: Handler, services: Services) -> None:
    """`app.command(...)`, `app.event(...)` or `app.action(...)`, acknowledged then handled lazily."""
    if services.run_inline:
        decorator(inline(handler, services))
    else:
        decorator(ack=acknowledge, lazy=[lazy(handler, services)])
