"""Errors as JSON, ``{"error": {"code": ..., "message": ...}}``, with the codes of
``compaction.core.errors`` and an HTTP status each (docs/architecture.md, "The gateway").

Two refusals keep the command line's ``invalid_request`` there but are answered by what they
mean over HTTP: ``NotFound`` (404 ``not_found``) and ``Conflict`` (409 ``conflict``). A database
or Redis that fails is 503; anything else unexpected is 500 ``internal_error`` with no detail
(the traceback goes to the log).
"""

from __future__ import annotations

from typing import Any

import redis
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from compaction.core.errors import CompactionError, Conflict, NotFound, one_line
from compaction.service import logs
from compaction.store.db import database_error

log = logs.get_logger(__name__)

#: the codes that are not "your request is wrong" (400)
STATUS = {
    "session_not_found": 404,
    "unauthorized": 401,
    "forbidden_host": 403,
    "forbidden_origin": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "db_error": 503,
    "redis": 503,
    "timeout": 503,
    "no_auxiliary_model": 409,
    "no_chat_model": 409,
    "compaction_disabled": 409,
    "busy": 409,
    "pins_over_threshold": 409,
    "draft_stale": 409,
    "draft_closed": 409,
    # the chat model failed or was too slow: the gateway is fine, what it called is not
    "llm_error": 502,
    "reply_too_long": 502,
    "llm_timeout": 504,
    "internal_error": 500,
}
#: what an HTTP status says when only the status is known (a route or method that is not there)
HTTP_CODES = {
    401: "unauthorized",
    404: "not_found",
    405: "invalid_request",
    409: "conflict",
    413: "too_large",
}


def error_response(code: str, message: str, status: int | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": " ".join(message.split())}},
        status_code=status or STATUS.get(code, 400),
    )


def compaction_error(err: CompactionError) -> JSONResponse:
    if isinstance(err, NotFound):
        return error_response("not_found", err.message)
    if isinstance(err, Conflict):
        return error_response("conflict", err.message)
    return error_response(err.code, err.message)


def install(app: FastAPI) -> None:
    """Every failure the API can answer, as one JSON shape; the OpenAPI document says so."""
    _documented(app)

    @app.exception_handler(CompactionError)
    async def refused(_request: Request, err: CompactionError) -> JSONResponse:
        return compaction_error(err)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, err: RequestValidationError) -> JSONResponse:
        # Never the input: it can be a key or a whole message.
        errors = err.errors()
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return error_response("invalid_request", f"{where}: {first.get('msg', 'invalid')}{more}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, err: StarletteHTTPException) -> JSONResponse:
        code = HTTP_CODES.get(err.status_code, "invalid_request")
        return error_response(code, str(err.detail), err.status_code)

    @app.exception_handler(redis.RedisError)
    async def redis_failed(_request: Request, err: redis.RedisError) -> JSONResponse:
        return error_response("redis", f"Redis failed: {type(err).__name__}")

    @app.exception_handler(SQLAlchemyError)
    async def database_failed(_request: Request, err: SQLAlchemyError) -> JSONResponse:
        return compaction_error(database_error(getattr(err, "orig", None) or err))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, err: Exception) -> JSONResponse:
        log.error("unexpected error", path=request.url.path, error=type(err).__name__)
        return error_response("internal_error", "the gateway failed; see its log")


__all__ = ["STATUS", "compaction_error", "error_response", "install", "one_line"]


#: the schemas FastAPI documents for its own 422 answer, which this app never sends
_VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")


def _documented(app: FastAPI) -> None:
    """Invalid input is answered 400 ``invalid_request`` (``install``), never FastAPI's 422: the
    document lists no 422, so a generated client expects the answers it gets."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        first = app.openapi_schema is None
        schema = build()
        if first:
            for operations in schema.get("paths", {}).values():
                for operation in operations.values():
                    operation.get("responses", {}).pop("422", None)
            components = schema.get("components", {}).get("schemas", {})
            for name in _VALIDATION_SCHEMAS:
                components.pop(name, None)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
