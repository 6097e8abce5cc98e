"""docs/reference.md's tables are what the code declares (compaction.cli.reference): the file is
current, every setting and code has its meaning, and the generator reads a parser faithfully."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import get_args

import pytest

from compaction.cli import reference
from compaction.core.errors import ErrorCode, SkipCode
from compaction.service.settings import Settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference.md"


def test_docs_reference_is_what_the_code_generates() -> None:
    current = DOC.read_text(encoding="utf-8")
    assert reference.render(current) == current, (
        f"docs/reference.md is out of date: run `{reference.REGENERATE}` and commit it"
    )


def test_every_setting_has_one_meaning() -> None:
    # A field's own description, or (the core's parameters) the generator's line: never both.
    for name, field in Settings.model_fields.items():
        assert bool(field.description) != (name in reference.PARAMETER_MEANINGS), name
    assert set(reference.PARAMETER_MEANINGS) <= set(Settings.model_fields)


def test_the_table_names_the_variables_settings_read(monkeypatch: pytest.MonkeyPatch) -> None:
    assert all(
        f.alias is None and f.validation_alias is None for f in Settings.model_fields.values()
    )
    monkeypatch.setenv(reference.env_name("queue_name"), "q-reference")
    monkeypatch.setenv(reference.env_name("threshold_percent"), "85")
    settings = Settings()
    assert (settings.queue_name, settings.threshold_percent) == ("q-reference", 85)


def test_a_settings_row_shows_type_range_and_default() -> None:
    table = reference.settings_table()
    assert "| `COMPACTION_THRESHOLD_PERCENT` | int, 30–95 | `70` |" in table
    assert "| `COMPACTION_LOCK_TTL_S` | float, > 0 | `10` |" in table
    assert "| `COMPACTION_TOKEN_ESTIMATOR` | `cjk` \\| `seed` | `cjk` |" in table
    assert "| `COMPACTION_GATEWAY_TOKEN` | secret str | unset |" in table
    assert "| `COMPACTION_MODEL_WINDOWS` | dict[str, int] | `{}` |" in table
    # machine-dependent, so never printed (the docs would differ between machines)
    assert "| `COMPACTION_DATABASE_URL` | str | computed (see meaning) |" in table


def test_every_code_has_a_meaning_and_a_status() -> None:
    meanings = reference.error_meanings()
    for code in [*get_args(ErrorCode), *reference.gateway_codes()]:
        assert meanings.get(code), code
    assert set(reference.skip_meanings()) == set(get_args(SkipCode))
    assert reference.gateway_codes() == [
        "conflict",
        "forbidden_host",
        "forbidden_origin",
        "not_found",
        "too_large",
        "unauthorized",
    ]
    table = reference.errors_table()
    assert "| `session_not_found` | 404 |" in table
    assert "| `llm_timeout` | 504 |" in table
    assert "| `forbidden_origin` | 403 |" in table
    assert "| `invalid_config` | 400 |" in table


def toy_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toy")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run it")
    run.add_argument("target")
    run.add_argument("--mode", choices=("fast", "slow"), default="fast", help="how")
    run.add_argument("--name", required=True)
    group = run.add_mutually_exclusive_group()
    group.add_argument("--on", dest="state", action="store_true", default=None)
    group.add_argument("--off", dest="state", action="store_false")
    nested = commands.add_parser("thing", help="things")
    actions = nested.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="list things")
    return parser


def test_the_cli_reference_reads_nested_commands_and_options() -> None:
    text = reference.cli_reference(toy_parser())
    assert [line for line in text.splitlines() if line.startswith("###")] == [
        "### `toy run`",
        "### `toy thing list`",
    ]
    assert "| `target` |  |  |" in text
    assert "| `--mode {fast,slow}` | `fast` | how |" in text
    assert "| `--name NAME` |  | required |" in text
    # a flag's default is its group's, never shown (store_false's own True would mislead)
    assert "| `--off` |  |  |" in text
    assert "list things" in text


def test_the_cli_reference_has_every_command_of_compaction() -> None:
    text = reference.cli_reference()
    for command in ("demo", "channel add", "agent set", "gateway", "worker", "migrate"):
        assert f"### `compaction {command}`" in text
    assert "| `--api-key-env API_KEY_ENV` |" in text


def test_render_replaces_only_between_markers() -> None:
    document = "".join(
        f"BEFORE-{name}\n<!-- generated: {name} -->\nOLD-TEXT\n<!-- end -->\nAFTER-{name}\n"
        for name in reference.TABLES
    )
    rendered = reference.render(document)
    assert "OLD-TEXT" not in rendered
    for name in reference.TABLES:
        assert (
            f"BEFORE-{name}\n<!-- generated: {name} -->\n{reference.TABLES[name]()}\n" in rendered
        )
        assert f"\n<!-- end -->\nAFTER-{name}\n" in rendered
    assert reference.render(rendered) == rendered
    with pytest.raises(ValueError, match="errors"):
        reference.render(document.replace("generated: errors", "generated: gone"))


def test_main_checks_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "reference.md"
    path.write_text(
        "".join(f"<!-- generated: {name} -->\n<!-- end -->\n" for name in reference.TABLES)
    )
    assert reference.main([str(path), "--check"]) == 1
    assert reference.REGENERATE in capsys.readouterr().err
    assert reference.main([str(path)]) == 0
    assert reference.main([str(path), "--check"]) == 0
    assert "COMPACTION_REDIS_URL" in path.read_text()
