"""Dependencies the gateway's handlers share (docs/architecture.md, "The gateway"): the
``Resources`` built at start-up, and the producers and store behind them."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from compaction.gateway.resources import Resources
from compaction.producers.context import Producers
from compaction.store import Store


def resources(request: Request) -> Resources:
    """The ``Resources`` ``create_app`` was given (``app.state.resources``)."""
    found: Resources = request.app.state.resources
    return found


def producers(request: Request) -> Producers:
    return resources(request).producers


def store(request: Request) -> Store:
    return resources(request).producers.store


ResourcesDep = Annotated[Resources, Depends(resources)]
ProducersDep = Annotated[Producers, Depends(producers)]
StoreDep = Annotated[Store, Depends(store)]
