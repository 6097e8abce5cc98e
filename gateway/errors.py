"""Errors as JSON, ``{"error": {"code": ..., "message": ...}}``, with the codes of
``compaction.errors`` and an HTTP status each (docs/architecture.md, "The gateway")."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from compaction.errors import CompactionError, one_line

#: the codes that are not "your request is wrong" (400)
STATUS = {
    "session_not_found": 404,
    "unauthorized": 401,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "db_error": 503,
    "redis": 503,
    "timeout": 503,
    "no_auxiliary_model": 409,
    "no_chat_model": 409,
    "internal_error": 500,
}


def error_response(code: str, message: str, status: int | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": " ".join(message.split())}},
        status_code=status or STATUS.get(code, 400),
    )


def install(app: FastAPI) -> None:
    """Every failure the API can answer, as one JSON shape."""

    @app.exception_handler(CompactionError)
    async def compaction_error(_request: Request, err: CompactionError) -> JSONResponse:
        return error_response(err.code, err.message)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, err: RequestValidationError) -> JSONResponse:
        errors = err.errors()
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return error_response("invalid_request", f"{where}: {first.get('msg', 'invalid')}{more}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, err: StarletteHTTPException) -> JSONResponse:
        codes = {401: "unauthorized", 404: "not_found", 405: "invalid_request", 413: "too_large"}
        return error_response(
            codes.get(err.status_code, "invalid_request"), str(err.detail), err.status_code
        )


__all__ = ["STATUS", "error_response", "install", "one_line"]
