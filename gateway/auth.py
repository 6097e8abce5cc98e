"""The gateway's guard (docs/architecture.md, "The gateway"): on every request a ``Host`` the
gateway answers to and, on socket handshakes (WebSocket, SSE) and anything but GET/HEAD, an
``Origin`` it trusts (``gateway.browsers``: other web pages cannot drive it, even without a
token); a bearer token on every ``/api`` and ``/ws`` call when ``COMPACTION_GATEWAY_TOKEN`` is
set (a WebSocket may pass it as the ``token`` query parameter, browsers cannot set its headers,
and so may an SSE ``GET .../events``); a cap on request bodies; the browser security headers on
every answer.

Pure ASGI middleware: it answers before any route runs, for HTTP and WebSocket alike.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, HTTPException

from compaction.gateway import browsers
from compaction.gateway.resources import GatewayOptions

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

GUARDED = ("/api/", "/ws/")


class Guard:
    def __init__(self, app: ASGIApp, options: GatewayOptions) -> None:
        self.app = app
        self.options = options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self._foreign(scope)
        if refusal is not None:
            await _refuse(scope, send, 403, *refusal)
            return
        if not scope["path"].startswith(GUARDED):
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            await _refuse(scope, send, 401, "unauthorized", "a bearer token is required")
            return
        if scope["type"] == "http":
            receive = self._capped(scope, receive, send)
        await self.app(scope, receive, send)

    def _foreign(self, scope: Scope) -> tuple[str, str] | None:
        """The code and message refusing a request another web page may have sent, if it is
        one: a ``Host`` not answered (DNS rebinding), or a foreign ``Origin`` where the request
        would act or subscribe (a plain GET's answer is unreadable to it without CORS)."""
        options = self.options
        headers = dict(scope.get("headers") or [])
        host = _text(headers.get(b"host"))
        if not options.any_host and not browsers.host_allowed(host, options.allowed_hosts):
            return "forbidden_host", "this gateway does not answer to that Host name"
        origin = _text(headers.get(b"origin"))
        if origin is None or not _acts(scope):
            return None
        if browsers.origin_allowed(origin, host, options.trusted_origins):
            return None
        return "forbidden_origin", "requests from another web page's origin are refused"

    def _authorized(self, scope: Scope) -> bool:
        token = self.options.token
        if token is None:
            return True
        expected = token.get_secret_value().encode()
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"authorization", b"")
        if given.startswith(b"Bearer "):
            return hmac.compare_digest(given[7:], expected)
        if scope["type"] == "websocket" or _is_event_stream(scope):
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            value = (query.get("token") or [""])[0].encode()
            return bool(value) and hmac.compare_digest(value, expected)
        return False

    def _capped(self, scope: Scope, receive: Receive, send: Send) -> Receive:
        """A body over the cap ends the request with 413 before a handler reads it."""
        limit = self.options.max_body_bytes
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _TooLarge(limit)
        seen = 0

        async def capped() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _TooLarge(limit)
            return message

        return capped


def documented(app: FastAPI) -> None:
    """The guard in the app's OpenAPI document: a bearer scheme on every ``/api`` operation,
    so Swagger UI (``/docs``) offers "Authorize" and a generated client sends the token."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
            schemes["bearer"] = {
                "type": "http",
                "scheme": "bearer",
                "description": "COMPACTION_GATEWAY_TOKEN, when the gateway has one",
            }
            for path, operations in schema.get("paths", {}).items():
                if path.startswith(GUARDED):
                    for operation in operations.values():
                        operation["security"] = [{"bearer": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


def _acts(scope: Scope) -> bool:
    """Whether the request acts or subscribes: a socket handshake, an SSE stream, anything but
    GET/HEAD (a CORS preflight of an allowed origin is answered before the guard)."""
    if scope["type"] == "websocket":
        return True
    return scope["method"] not in ("GET", "HEAD") or _is_event_stream(scope)


def _is_event_stream(scope: Scope) -> bool:
    """SSE: a browser's ``EventSource`` cannot set headers either, so it may pass ``?token=``."""
    path: str = scope["path"]
    return scope["type"] == "http" and scope["method"] == "GET" and path.endswith("/events")


class _TooLarge(HTTPException):
    """An ``HTTPException``: raised while a handler's body is read, FastAPI passes it on as it
    is (any other error there becomes its 400 "error parsing the body"), and the app's
    handler answers 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is over {limit} bytes")


class BodyLimit:
    """Turns ``_TooLarge`` (raised while a body is read) into a 413 JSON answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except _TooLarge as err:
            await _refuse(scope, send, 413, "too_large", err.detail)


class SecurityHeaders:
    """The outermost middleware: every answer, the guard's refusals and the CORS preflights
    included, carries ``browsers.security_headers`` (a handler's own value wins)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        extra = browsers.security_headers(scope["path"])

        async def sending(message: Message) -> None:
            if message["type"] in ("http.response.start", "websocket.http.response.start"):
                given = {name.lower() for name, _ in message.get("headers") or []}
                headers = [*(message.get("headers") or [])]
                message["headers"] = headers + [h for h in extra if h[0] not in given]
            await send(message)

        await self.app(scope, receive, sending)


async def _refuse(scope: Scope, send: Send, status: int, code: str, message: str) -> None:
    """The JSON error; a WebSocket handshake gets it as its HTTP answer where the server can
    send one (ASGI's denial response), else a close code (44xx: the status)."""
    kind = "http"
    if scope["type"] == "websocket":
        if "websocket.http.response" not in (scope.get("extensions") or {}):
            await send({"type": "websocket.close", "code": 4000 + status})
            return
        kind = "websocket.http"
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": f"{kind}.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ],
        }
    )
    await send({"type": f"{kind}.response.body", "body": body})
