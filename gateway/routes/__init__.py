"""The gateway's routers, one module per group of endpoints (docs/architecture.md, "The
gateway")."""

from fastapi import APIRouter

from compaction.gateway.routes import (
    agents,
    channels,
    chat,
    drafts,
    pins,
    realtime,
    recall,
    runs,
    sessions,
)

ROUTERS: tuple[APIRouter, ...] = (
    sessions.router,
    pins.router,
    recall.router,
    runs.router,
    drafts.router,
    agents.router,
    channels.router,
    realtime.router,
    chat.router,
    chat.choice_router,
)
