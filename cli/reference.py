"""The reference tables of docs/reference.md, generated from the code so that each has one home:
the settings (``Settings``' fields), the error codes (``ErrorCode`` with the gateway's HTTP
status) and the command line (the ``compaction`` parser).

``python -m compaction.cli.reference`` rewrites the tables between their markers in
docs/reference.md; ``--check`` only says whether the file is current (exit 1 when it is not);
``--print`` prints the document the code gives.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo

from compaction.cli import build_parser
from compaction.core import errors
from compaction.core.config import CompactionParameters
from compaction.core.errors import ErrorCode, SkipCode
from compaction.gateway.errors import HTTP_CODES, STATUS
from compaction.service.settings import Settings

REGENERATE = "python -m compaction.cli.reference"
DEFAULT_PATH = Path("docs/reference.md")

# The algorithm's parameters are declared in the pure core (CompactionParameters), which
# Settings inherits: their meanings live here, beside the generator, until the core's fields
# carry descriptions of their own (a field with a description must not have one here too).
PARAMETER_MEANINGS = {
    "context_window": "the window when neither the request, the model registry nor the agent "
    "gives one",
    "threshold_percent": "compact when a session reaches this share of its window; applies to "
    "every agent that leaves its own blank (agents set theirs in steps of 5)",
    "protect_first_n": "messages at the start always kept verbatim (every leading system "
    "message too); applies to every agent that leaves its own blank",
    "token_budget": "a fixed threshold in tokens instead of `THRESHOLD_PERCENT` (capped at the "
    "window); an agent's own budget comes first",
    "tail_token_budget_ratio": "share of the threshold kept verbatim at the end",
    "min_tail_messages": "fewest messages kept verbatim at the end",
    "prune_min_chars": "older tool results longer than this get a placeholder (the original "
    "stays in the database)",
    "summary_min_tokens": "summary budget's floor: max(min, min(middle x ratio, max)) on the "
    "middle's tokens before pruning",
    "summary_max_tokens": "summary budget's ceiling; a summary over twice this is "
    "`summary_too_long`",
    "summary_ratio": "summary budget's share of the middle's tokens",
    "chars_per_token": "characters per token of the estimate",
    "token_estimator": "`cjk`: a CJK character counts one token; `seed`: length / "
    "`CHARS_PER_TOKEN`",
    "serialize_head_chars": "first characters of each message sent to the summarizer",
    "serialize_tail_chars": "last characters of each message sent to the summarizer",
    "min_summary_chars": "a shorter summary is `summary_too_short`",
    "summary_language": "`auto` (the user's language), `zh` or `en`",
    "summary_input_max_tokens": "serialized turns per summarizer call (a longer middle is folded "
    "chunk by chunk); at least `SUMMARY_MAX_TOKENS` + 2000",
    "ledger_max_tokens": "cap of the verbatim identifier ledger; 0 turns it off",
    "user_words_max_tokens": "cap of the summary's section of the user's messages kept "
    "verbatim (newest first, the rest by first line); 0 turns it off",
    "redact_secrets": "redact secrets on the way to and from the auxiliary model",
}

# Each code's meaning has one home, the table (and, for skips, the sentence) of
# compaction.core.errors' docstring, where the codes are defined; the gateway's own refusals are
# described here (compaction.gateway.errors answers them, its docstring in prose).
GATEWAY_MEANINGS = {
    "unauthorized": "no or a wrong bearer token",
    "forbidden_host": "a `Host` the gateway does not answer (without a token: not a loopback "
    "name; see `GATEWAY_ALLOWED_HOSTS`)",
    "forbidden_origin": "a socket handshake or a request other than GET/HEAD from another web "
    "page's `Origin` (see `GATEWAY_ALLOWED_ORIGINS`), or `null`",
    "not_found": "no such route, or an `invalid_request` naming nothing stored (a channel, run or "
    "agent)",
    "conflict": "an `invalid_request` refused by what is stored (a name taken, a channel in use)",
    "too_large": "a request body over the cap",
}
_ROW = re.compile(r"^\| `(\w+)` \| (.+?) \|$", re.MULTILINE)
_SKIP = re.compile(r"`(\w+)` \(([^()]+)\)")


def error_meanings() -> dict[str, str]:
    """Each ``ErrorCode``'s line in compaction.core.errors' table, then the gateway's codes."""
    rows = dict(_ROW.findall(errors.__doc__ or ""))
    return rows | {code: f"gateway only: {text}" for code, text in GATEWAY_MEANINGS.items()}


def skip_meanings() -> dict[str, str]:
    """Each ``SkipCode`` as compaction.core.errors' docstring explains it."""
    _, _, skips = (errors.__doc__ or "").partition("`SkipCode`:")
    return dict(_SKIP.findall(" ".join(skips.split())))


def gateway_codes() -> list[str]:
    """Codes the gateway answers that are not ``ErrorCode``s (HTTP refusals)."""
    known = set(get_args(ErrorCode))
    return sorted({*STATUS, *HTTP_CODES.values()} - known)


def http_status(code: str) -> int:
    # The gateway's own rule (compaction.gateway.errors.error_response): 400 unless listed.
    return STATUS.get(code, 400)


# --- settings ----------------------------------------------------------------------------


def env_name(name: str) -> str:
    return f"{Settings.model_config.get('env_prefix', '')}{name}".upper()


def meaning_of(name: str, field: FieldInfo) -> str:
    return field.description or PARAMETER_MEANINGS.get(name, "")


def type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return " \\| ".join(f"`{arg}`" for arg in get_args(annotation))
    if origin in (Union, types.UnionType):
        return " \\| ".join(type_name(a) for a in get_args(annotation) if a is not type(None))
    if origin is not None:  # dict[str, int], list[str]
        return f"{origin.__name__}[{', '.join(type_name(a) for a in get_args(annotation))}]"
    return "secret str" if annotation.__name__ == "SecretStr" else str(annotation.__name__)


_BOUNDS = (("gt", "> "), ("ge", "≥ "), ("lt", "< "), ("le", "≤ "))


def bounds(field: FieldInfo) -> str:
    """A field's range as its validators state it: ``30–95``, ``≥ 5``, ``> 0``."""
    found = {
        attr: getattr(m, attr) for m in field.metadata for attr, _ in _BOUNDS if hasattr(m, attr)
    }
    if "ge" in found and "le" in found:
        return f"{found['ge']}–{found['le']}"
    return ", ".join(f"{sign}{found[attr]}" for attr, sign in _BOUNDS if attr in found)


def value_text(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    if isinstance(value, dict | list):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def default_text(field: FieldInfo) -> str:
    factory = field.default_factory
    if factory is None:
        return value_text(field.default)
    if factory in (dict, list):
        return value_text(factory())
    return "computed (see meaning)"  # it depends on the machine, e.g. the user's data folder


def settings_rows(names: Iterable[str]) -> list[str]:
    rows = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    for name in names:
        field = Settings.model_fields[name]
        kind = type_name(field.annotation)
        limits = bounds(field)
        kind = f"{kind}, {limits}" if limits else kind
        rows.append(
            f"| `{env_name(name)}` | {kind} | {default_text(field)} | {meaning_of(name, field)} |"
        )
    return rows


def settings_table() -> str:
    """The service's own settings, then the algorithm's parameters (which agents may override)."""
    parameters = CompactionParameters.model_fields
    service = [name for name in Settings.model_fields if name not in parameters]
    heading = ["", "The algorithm's parameters (docs/algorithm.md):", ""]
    return "\n".join(settings_rows(service) + heading + settings_rows(parameters))


# --- error codes -------------------------------------------------------------------------


def errors_table() -> str:
    meanings, skips = error_meanings(), skip_meanings()
    rows = ["| code | HTTP | meaning |", "|---|---|---|"]
    for code in [*get_args(ErrorCode), *gateway_codes()]:
        rows.append(f"| `{code}` | {http_status(code)} | {meanings.get(code, '')} |")
    rows += ["", "Skip codes (`compaction_skipped`; not failures):", ""]
    rows += ["| code | meaning |", "|---|---|"]
    rows += [f"| `{code}` | {skips.get(code, '')} |" for code in get_args(SkipCode)]
    return "\n".join(rows)


# --- command line ------------------------------------------------------------------------


def subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[argparse.ArgumentParser, str]]:
    """Every command that runs something, depth first in the parser's order, with its help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                    yield from subcommands(sub)
                else:
                    yield sub, helps.get(name, "")


def argument_text(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{names}`"
    if action.choices is not None:
        return f"`{names} {{{','.join(str(c) for c in action.choices)}}}`"
    metavar = action.metavar or action.dest.upper()
    return f"`{names} {metavar}`"


def argument_row(action: argparse.Action) -> str:
    # A flag's default is its dest's, which another flag of its group may set: none shown.
    flag = action.nargs == 0
    default = "" if flag or action.default is None else value_text(str(action.default))
    required = "required" if action.required and action.option_strings else ""
    meaning = "; ".join(part for part in (required, action.help) if part)
    return f"| {argument_text(action)} | {default} | {meaning} |"


def cli_reference(command: argparse.ArgumentParser | None = None) -> str:
    """A section per command of ``command`` (the ``compaction`` command's parser by default)."""
    blocks = []
    for parser, help_text in subcommands(command or build_parser()):
        arguments = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
        lines = [f"### `{parser.prog}`", "", help_text]
        if arguments:
            lines += ["", "| argument | default | meaning |", "|---|---|---|"]
            lines += [argument_row(a) for a in arguments]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


# --- the document ------------------------------------------------------------------------

TABLES: dict[str, Callable[[], str]] = {
    "settings": settings_table,
    "errors": errors_table,
    "cli": cli_reference,
}
_MARKED = re.compile(r"(<!-- generated: (\w+) -->\n)(?:.*?\n)??(<!-- end -->)", re.DOTALL)


def render(document: str) -> str:
    """The document with every marked table replaced by what the code gives now."""
    missing = [name for name in TABLES if f"<!-- generated: {name} -->" not in document]
    if missing:
        raise ValueError(f"no '<!-- generated: NAME -->' marker for: {', '.join(missing)}")
    return _MARKED.sub(lambda m: m[1] + TABLES[m[2]]() + "\n" + m[3], document)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__)
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 when the file is not current")
    mode.add_argument("--print", action="store_true", help="print the document, write nothing")
    args = parser.parse_args(argv)
    current = args.path.read_text(encoding="utf-8")
    wanted = render(current)
    if args.print:
        sys.stdout.write(wanted)
    elif args.check:
        if wanted != current:
            print(f"{args.path} is out of date: run {REGENERATE}", file=sys.stderr)
            return 1
    elif wanted != current:
        args.path.write_text(wanted, encoding="utf-8")
        print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
