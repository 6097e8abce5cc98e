"""Redaction over many texts and in context (compaction/core/redact.py: ``redact_many``,
``rules_for``, ``Secrets``; docs/architecture.md, "The algorithm")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction.core.redact import (
    _RULES,
    MIN_HIDDEN_CHARS,
    REDACTED,
    Secrets,
    redact,
    redact_many,
    rules_for,
)
from tests.unit.secret_samples import (
    ALNUM,
    ANTHROPIC,
    AWS,
    GITHUB,
    GITHUB_PAT,
    GOOGLE,
    HUGGINGFACE,
    JWT,
    OPENAI,
    OPENAI_PROJECT,
    PEM,
    SLACK,
    STRIPE,
)

# --------------------------------------------------------------------------- redact_many


def test_redact_many_equals_redact_each() -> None:
    texts = [
        "clean text",
        f"key {OPENAI} here",
        "/home/user/app/main.py",
        "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",  # split key, part 1
        "BKcwggSjAgEAAoIBAQC7\n-----END " + "PRIVATE KEY-----",  # part 2
        f"Authorization: Bearer {ALNUM}",
        "",
        "postgres://u:pw123456@h/db",
        PEM,
        "the end",
    ]
    expected = [redact(t) for t in texts]
    assert redact_many(texts) == expected
    # The split key's halves are not a key on their own: they stay as they were.
    assert expected[3] == texts[3]
    assert expected[4] == texts[4]
    assert expected[1] == f"key {REDACTED} here"
    assert expected[8] == REDACTED


def test_redact_many_small_inputs() -> None:
    assert redact_many([]) == []
    assert redact_many([f"x {AWS}"]) == [f"x {REDACTED}"]
    assert redact_many(["a", "b"]) == ["a", "b"]


def test_redact_many_returns_a_new_list() -> None:
    texts = [f"x {AWS}", "y"]
    out = redact_many(texts)
    assert texts == [f"x {AWS}", "y"]
    assert out == [f"x {REDACTED}", "y"]


@pytest.mark.parametrize(
    "texts",
    [
        ["Authorization: Bearer", "abcdefghijklmnop1234 is an ordinary word list"],
        ["the password", "= not-a-secret-value"],
    ],
)
def test_redact_many_entries_do_not_leak_into_each_other(texts: list[str]) -> None:
    assert redact_many(texts) == [redact(t) for t in texts]


# --------------------------------------------------------------------------- rules_for


ALL_SECRETS = [OPENAI, OPENAI_PROJECT, ANTHROPIC, AWS, GITHUB, GITHUB_PAT, SLACK, GOOGLE, STRIPE]
ALL_SECRETS += [HUGGINGFACE, JWT, PEM, "Bearer " + ALNUM, "api_key=" + ALNUM, "PASSWORD: hunter22"]
ALL_SECRETS += ["postgres://u:pw123456@h/db", "Token abcdef1234567890abcdef", "secret = 'xyzxyz1'"]
ALL_SECRETS += ["DB_PASS=hunter22", "curl -u admin:pass", "--user a:b", "?code=abc&state=x"]
ALL_SECRETS += ["refresh_token=abcdefgh&x=1", "passphrase: horse-staple", "&code=xyz"]


def test_no_rule_literal_holds_white_space() -> None:
    # What lets rules chosen on a text's distinct words serve the text itself.
    assert all(not any(c.isspace() for c in rule.literal) for rule in _RULES)


def test_rules_for_clean_text_is_empty() -> None:
    assert rules_for("an ordinary sentence about src/app.py and 42 tests") == ()
    assert redact("nothing here", ()) == "nothing here"


@given(
    st.lists(
        st.sampled_from(
            [*ALL_SECRETS, "word", "/src/app.py", "日本語", "x=1", "\n", "Bearer", "token", "sk-"]
        ),
        max_size=12,
    ),
    st.integers(min_value=0, max_value=400),
)
def test_rules_chosen_on_distinct_words_redact_like_rules_chosen_on_the_text(
    parts: list[str], cut: int
) -> None:
    # The engine chooses the rules on the middle's distinct words and runs them over the
    # serialized turns, which are those words, cut, joined and tagged.
    text = " ".join(parts)
    vocabulary = " ".join(dict.fromkeys(text.split()))
    shown = f"[TOOL] {text[:cut]}\n...[9 characters omitted]...\n{text[cut + 9 :]}"
    assert redact(shown, rules_for(vocabulary)) == redact(shown)
    assert redact_many([shown, text], rules_for(vocabulary)) == [redact(shown), redact(text)]


def test_redact_many_spans_several_blocks() -> None:
    texts = [f"entry {i} {AWS if i % 7 == 0 else 'clean'} " + "x" * 5_000 for i in range(200)]
    out = redact_many(texts)
    assert out == [redact(t) for t in texts]
    assert sum(REDACTED in t for t in out) == len(range(0, 200, 7))


# --------------------------------------------------------------------------- Secrets

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"


def secrets_of(*texts: str) -> Secrets:
    return Secrets.of(list(texts), rules_for(" ".join(texts)))


def test_secrets_are_what_redaction_takes_out_in_context() -> None:
    found = secrets_of(
        f"aws_secret_access_key = {AWS_SECRET}",
        "curl -u admin:Tr0ub4dor https://x.io and postgres://u:pw@h/db",
        PEM,
    )
    pem_lines = {line for line in PEM.splitlines() if len(line) >= MIN_HIDDEN_CHARS}
    # "pw" is too short to look for away from its context
    assert found.values == {AWS_SECRET, "Tr0ub4dor", *pem_lines}
    assert not secrets_of("nothing secret here, password reset docs")


def test_a_match_spanning_two_texts_is_no_secret() -> None:
    assert not secrets_of(
        "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQ", "BKcw\n-----END PRIVATE KEY-----"
    )


def test_hide_replaces_whole_occurrences_only() -> None:
    found = Secrets(["hunter2hunter2", AWS_SECRET])
    text = f"- {AWS_SECRET}\nhunter2hunter2, xhunter2hunter2 and hunter2hunter2s stay"
    assert found.hide(text) == f"- {REDACTED}\n{REDACTED}, xhunter2hunter2 and hunter2hunter2s stay"
    assert found.hide("clean") == "clean"


def test_outside_drops_a_secret_and_its_pieces() -> None:
    found = Secrets([AWS_SECRET])
    items = ["wJalrXUtnFEMI/K7MDENG", AWS_SECRET, "src/app.py", f"cat {AWS_SECRET}"]
    assert found.outside(items) == ["src/app.py", f"cat {REDACTED}"]
