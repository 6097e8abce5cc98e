"""The gateway's OpenAPI document, committed as ``docs/openapi.json`` so that a client in
another language can be written (or generated) without running the gateway; a test fails when
the committed file drifts from the app (docs/architecture.md, "The gateway").

``python -m compaction.gateway.openapi > docs/openapi.json`` writes it. Building it opens no
connection: the app is created over resources that are never used.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from compaction.gateway.app import create_app
from compaction.gateway.resources import Resources
from compaction.producers.context import Producers
from compaction.service.settings import Settings

#: the committed document, relative to the repository's root
COMMITTED = "docs/openapi.json"


def document() -> dict[str, Any]:
    # Explicit values: the document never depends on the caller's environment.
    settings = Settings(database_url="sqlite://", redis_url="redis://127.0.0.1:6379/0")
    app = create_app(Resources(settings=settings, producers=Producers.from_settings(settings)))
    return app.openapi()


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    sys.stdout.write(render(document()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
