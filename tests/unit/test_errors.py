"""The error codes (docs/architecture.md, "Error codes"): one list, each code documented and
exported as an enum; pydantic's reports turned into one line that never echoes the input."""

from __future__ import annotations

import re
from typing import Annotated, get_args

import pytest
from pydantic import BaseModel, Field, SecretStr, ValidationError, model_validator

from compaction.core import errors
from compaction.core.contract import CompactionFailed, CompactionSkipped, json_schemas
from compaction.core.errors import (
    CompactionError,
    ErrorCode,
    InvalidConfig,
    InvalidRequest,
    SkipCode,
    as_invalid_request,
    invalid_config,
    one_line,
)

CODES = set(get_args(ErrorCode))


def subclasses(cls: type[CompactionError]) -> list[type[CompactionError]]:
    return [c for sub in cls.__subclasses__() for c in (sub, *subclasses(sub))]


def test_every_exception_has_its_own_code_from_the_list() -> None:
    # A refinement (NotFound, Conflict: kinds of invalid_request a gateway answers 404 and
    # 409) keeps its parent's code; every class that sets a code sets its own.
    coded = [cls for cls in subclasses(CompactionError) if "code" in vars(cls)]
    codes = [cls.code for cls in coded]
    assert len(codes) >= 12
    assert set(codes) <= CODES
    assert len(codes) == len(set(codes))
    refinements = [cls for cls in subclasses(CompactionError) if cls not in coded]
    assert {cls.__name__ for cls in refinements} == {"NotFound", "Conflict"}
    assert all(issubclass(cls, InvalidRequest) for cls in refinements)
    assert CompactionError.code == "internal_error"  # the base: an error nobody classified


def test_every_code_is_documented_once_and_nothing_else_is() -> None:
    assert errors.__doc__ is not None
    documented = re.findall(r"^\| `(\w+)` \| \S", errors.__doc__, re.MULTILINE)
    assert sorted(documented) == sorted(CODES)
    for code in get_args(SkipCode):
        assert f"`{code}` (" in errors.__doc__


def test_the_exported_schemas_list_the_codes_as_enums() -> None:
    schemas = json_schemas()
    failed = schemas["compaction_failed.schema.json"]["properties"]["code"]
    skipped = schemas["compaction_skipped.schema.json"]["properties"]["code"]
    assert failed["enum"] == list(get_args(ErrorCode))
    assert skipped["enum"] == list(get_args(SkipCode))


def test_an_event_with_an_unknown_code_is_refused() -> None:
    CompactionFailed(session_id="s1", error="boom", code="llm_error")
    unknown = {"session_id": "s1", "error": "boom", "code": "compaction_error"}
    with pytest.raises(ValidationError):
        CompactionFailed.model_validate(unknown)
    with pytest.raises(ValidationError):
        CompactionSkipped.model_validate({"session_id": "s1", "code": "llm_error"})


class Limits(BaseModel):
    name: Annotated[str, Field(max_length=8)]
    count: Annotated[int, Field(ge=0)] = 0
    key: SecretStr | None = None


def caught(**values: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Limits.model_validate(values)
    return info.value


def test_one_line_names_the_field_and_never_echoes_the_input() -> None:
    secret = "sk-live-0123456789abcdef"
    err = caught(name=secret)
    assert secret in str(err) and "https://" in str(err)  # what pydantic's own report does
    text = one_line(err)
    assert text == "name: String should have at most 8 characters"
    assert secret not in text and "http" not in text and "\n" not in text


def test_one_line_counts_the_other_problems() -> None:
    text = one_line(caught(name="x" * 20, count=-1, key=12))
    assert text.startswith("name: String should have at most 8 characters")
    assert text.endswith("(and 2 more)")


def test_one_line_of_a_nested_field_and_of_the_whole_input() -> None:
    class Outer(BaseModel):
        inner: list[Limits]

    with pytest.raises(ValidationError) as nested:
        Outer.model_validate({"inner": [{"name": "ok"}, {"name": "ok", "count": -5}]})
    assert one_line(nested.value) == "inner.1.count: Input should be greater than or equal to 0"
    with pytest.raises(ValidationError) as whole:
        Limits.model_validate_json(b"{not json")
    assert one_line(whole.value).startswith("Invalid JSON: ")


def test_a_validators_message_reads_without_pydantic_prefix() -> None:
    class Checked(BaseModel):
        low: int
        high: int

        @model_validator(mode="after")
        def _ordered(self) -> Checked:
            if self.low > self.high:
                raise ValueError("low must not exceed high")
            return self

    with pytest.raises(ValidationError) as info:
        Checked(low=2, high=1)
    assert one_line(info.value) == "low must not exceed high"


def test_as_invalid_request_raises_the_projects_error() -> None:
    with pytest.raises(InvalidRequest) as info, as_invalid_request("limits"):
        Limits(name="far too long a name")
    err = info.value
    assert err.code == "invalid_request" and isinstance(err, ValueError)
    assert err.message == "invalid limits: name: String should have at most 8 characters"
    assert err.__cause__ is None and err.__suppress_context__  # pydantic's report not chained
    with as_invalid_request("limits"):
        assert Limits(name="fine").name == "fine"


def test_invalid_config_keeps_its_code() -> None:
    err = invalid_config(caught(name="x", count=-1), "settings")
    assert isinstance(err, InvalidConfig) and err.code == "invalid_config"
    assert str(err) == "invalid settings: count: Input should be greater than or equal to 0"
