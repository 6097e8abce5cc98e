"""What the providers' clients share (worker/llm/base.py): their options, with the key kept out
of reprs, and the SDK errors mapped to the stable codes with the key scrubbed."""

from __future__ import annotations

import json

import pytest

from compaction.core.errors import LlmError, LlmTimeout
from compaction.worker.llm.base import ClientOptions, SdkClient, SdkErrors, as_wire
from compaction.worker.llm.deadline import DeadlineClient

KEY = "sk-test-" + "0123456789abcdef" * 2


class Timeout(Exception):
    pass


class Status(Exception):
    status_code = 401


class Other(Exception):
    pass


class Connection(Other):
    pass


class Client(SdkClient):
    provider = "fake"
    errors = SdkErrors(Timeout, Status, Other, Connection)


def options(api_key: str | None = KEY, base_url: str = "http://127.0.0.1:9/v1") -> ClientOptions:
    return ClientOptions(
        model="m",
        api_key=api_key,
        base_url=base_url,
        timeout_s=3.0,
        max_retries=1,
        temperature=0.3,
        thinking=False,
    )


def test_the_key_is_in_no_repr() -> None:
    assert KEY not in repr(options())
    assert repr(Client(options())) == "Client(provider='fake', model='m')"


def test_sdk_kwargs_replace_a_missing_key() -> None:
    kwargs = options().sdk_kwargs(missing_key="unused")
    client = kwargs.pop("http_client")
    assert kwargs == {
        "api_key": KEY,
        "base_url": "http://127.0.0.1:9/v1",
        "timeout": 3.0,
        "max_retries": 0,  # the client's own retries back off (worker/llm/retry.py)
    }
    assert isinstance(client, DeadlineClient) and client.seconds == 3.0
    assert options(None).sdk_kwargs(missing_key="")["api_key"] == ""


@pytest.mark.parametrize(
    ("raised", "expected", "message"),
    [
        (Timeout(f"read timed out {KEY}"), LlmTimeout, "fake: the auxiliary model timed out"),
        (Status(f"bad key {KEY}\nbody"), LlmError, "fake answered 401: bad key [REDACTED]"),
        (Other(f"connection refused {KEY}"), LlmError, "fake: connection refused [REDACTED]"),
    ],
)
def test_sdk_errors_become_stable_codes_without_the_key(
    raised: Exception, expected: type[Exception], message: str
) -> None:
    with pytest.raises(expected) as caught, Client(options()).calling():
        raise raised
    assert str(caught.value) == message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_body_that_is_no_json_is_a_malformed_reply() -> None:
    with pytest.raises(LlmError) as caught, Client(options()).calling():
        json.loads('{"id": "x", "content": [')
    assert str(caught.value).startswith("fake: malformed reply: not JSON (")


def test_errors_hold_no_credential_of_the_base_url() -> None:
    password, query_key = "s3cret-" + "pw-42", "qk-" + "0123456789"
    base_url = f"https://user:{password}@proxy.example/v1?key={query_key}"
    with pytest.raises(LlmError) as caught, Client(options(base_url=base_url)).calling():
        raise Other(f"no route to proxy.example/v1?key={query_key} as user {password}")
    assert (
        str(caught.value) == "fake: no route to proxy.example/v1?key=[REDACTED] as user [REDACTED]"
    )


def test_messages_go_as_the_wire_shapes_beside_other_body_fields() -> None:
    """``as_wire``: the messages ride in ``extra_body`` (no SDK transform), and a body field a
    provider's rules put there already (DeepSeek's thinking switch) stays."""
    turns = [{"role": "user", "content": "hi"}]
    arguments = {"max_tokens": 10, "extra_body": {"thinking": {"type": "disabled"}}}
    wired = as_wire(turns, arguments)
    assert wired["messages"] == []
    assert wired["extra_body"] == {"thinking": {"type": "disabled"}, "messages": turns}
    assert wired["max_tokens"] == 10
    assert arguments["extra_body"] == {"thinking": {"type": "disabled"}}  # not changed
