"""The gateway's routers, one module per group of endpoints (docs/architecture.md, "The
gateway")."""

from fastapi import APIRouter

from gateway.routes import realtime, sessions, settings

ROUTERS: tuple[APIRouter, ...] = (sessions.router, settings.router, realtime.router)
