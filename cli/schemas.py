"""``compaction schemas``: write the JSON Schema of the job and of every event
(docs/architecture.md, "Events"), for gateways in other languages."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from compaction.core.contract import json_schemas


def register(commands: Any) -> None:
    parser = commands.add_parser("schemas", help="write the JSON Schemas of the job and events")
    parser.add_argument("--out", type=Path, default=Path("schemas"), help="folder (schemas/)")
    parser.set_defaults(run=run)


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    for name, schema in json_schemas().items():
        (args.out / name).write_text(render(schema), encoding="utf-8")
        print(args.out / name, file=out)
    return 0
