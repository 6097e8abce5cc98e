"""``create_app``: the gateway's ASGI application (docs/architecture.md, "The gateway")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources as package_files

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles

from compaction.gateway import errors
from compaction.gateway.auth import BodyLimit, Guard, SecurityHeaders, documented
from compaction.gateway.resources import Resources
from compaction.gateway.responses import Health
from compaction.gateway.routes import ROUTERS

API_VERSION = "1"


def create_app(resources: Resources) -> FastAPI:
    """The API under ``/api``, the sockets under ``/ws``, the console at ``/``; every
    resource a handler uses is ``app.state.resources``."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        async with resources.running():  # the event hub reads while the app serves
            yield

    app = FastAPI(
        lifespan=lifespan,
        generate_unique_id_function=operation_id,
        title="compaction gateway",
        version=API_VERSION,
        description="Context compaction for LLM agents: sessions, history views, /compact, "
        "context stats, runs and restore, agent settings and channels; events over WebSocket "
        "and SSE.",
    )
    app.state.resources = resources
    errors.install(app)
    documented(app)
    for router in ROUTERS:
        app.include_router(router)

    @app.get("/healthz", tags=["meta"])
    def healthz() -> Health:
        return Health(status="ok")

    static = package_files.files("compaction.gateway").joinpath("static")
    app.mount("/", StaticFiles(directory=str(static), html=True), name="console")
    options = resources.options
    # Added innermost first: a request meets the security headers, CORS, then the body cap,
    # then the guard (Host, Origin, token). CORS answers a configured origin's preflight (which
    # carries no token) and puts its headers on the guard's 401, 403 and 413 too, so a page
    # there can read them; the security headers go on every answer, these included.
    app.add_middleware(Guard, options=options)
    app.add_middleware(BodyLimit)
    if options.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(options.cors_origins),
            allow_methods=["*"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.add_middleware(SecurityHeaders)
    return app


def operation_id(route: APIRoute) -> str:
    """The handler's name (``compact``, ``list_sessions``): what a client generated from the
    OpenAPI document calls the operation."""
    return route.name
