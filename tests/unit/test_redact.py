"""Secret redaction (compaction/redact.py; docs/architecture.md, "The algorithm").

The fake secrets are assembled from pieces so that the file itself does not look like it
leaks real keys to a secret scanner.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction.redact import (
    _RULES,
    MIN_HIDDEN_CHARS,
    REDACTED,
    Secrets,
    combine,
    redact,
    redact_many,
    rules_for,
)

ALNUM = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"  # 32 characters
OPENAI = "sk-" + ALNUM[:24] + "T3BlbkFJ" + ALNUM[:12]
OPENAI_PROJECT = "sk-" + "proj-" + ALNUM + "_-" + ALNUM[:10]
ANTHROPIC = "sk-" + "ant-api03-" + ALNUM + "-" + ALNUM + "_AA"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB = "ghp_" + ALNUM + "1234"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" + "_" + ALNUM + ALNUM
SLACK = "xoxb-" + "123456789012-1234567890123-" + ALNUM[:24]
GOOGLE = "AIza" + "SyD-" + ALNUM[:31]  # 35 characters after the prefix
STRIPE = "sk_" + "live_" + ALNUM[:24]
HUGGINGFACE = "hf_" + ALNUM + "zz"
JWT = (
    "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    "." + "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN " + "RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END " + "RSA PRIVATE KEY-----"
)


def test_google_fixture_shape() -> None:
    assert len(GOOGLE) == 4 + 35


@pytest.mark.parametrize(
    "secret",
    [
        OPENAI,
        OPENAI_PROJECT,
        ANTHROPIC,
        AWS,
        GITHUB,
        GITHUB_PAT,
        SLACK,
        GOOGLE,
        STRIPE,
        HUGGINGFACE,
        JWT,
    ],
    ids=[
        "openai",
        "openai_project",
        "anthropic",
        "aws",
        "github",
        "github_pat",
        "slack",
        "google",
        "stripe",
        "huggingface",
        "jwt",
    ],
)
def test_key_shapes_are_replaced_whole(secret: str) -> None:
    text = f"before {secret} after"
    assert redact(text) == f"before {REDACTED} after"
    assert redact(f'export TOKEN_VALUE="{secret}"\nnext line') == (
        f'export TOKEN_VALUE="{REDACTED}"\nnext line'
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "curl -H 'Authorization: Bearer abcdefghijklmnop1234567890.xyz' https://x.io",
            f"curl -H 'Authorization: Bearer {REDACTED}' https://x.io",
        ),
        (
            "authorization: bearer AbCdEfGhIjKlMnOpQrStUv==",
            f"authorization: bearer {REDACTED}",
        ),
        (
            "DATABASE_URL=postgres://admin:pass@db.internal:5432/app",
            f"DATABASE_URL=postgres://admin:{REDACTED}@db.internal:5432/app",
        ),
        (
            "redis://default:S3cr3t-P4ss@cache:6379/0 is the cache",
            f"redis://default:{REDACTED}@cache:6379/0 is the cache",
        ),
        ("API_KEY=abcd1234efgh5678", f"API_KEY={REDACTED}"),
        (
            "OPENAI_API_KEY=abcd1234efgh5678 python run.py",
            f"OPENAI_API_KEY={REDACTED} python run.py",
        ),
        (
            '{"password": "hunter2hunter2", "user": "bob"}',
            f'{{"password": "{REDACTED}", "user": "bob"}}',
        ),
        ("Password = correct-horse-battery", f"Password = {REDACTED}"),
        ("client_secret: 9f8e7d6c5b4a3210", f"client_secret: {REDACTED}"),
        ("apiKey: 'abcdef123456'", f"apiKey: '{REDACTED}'"),
        ("SECRET_KEY = 'django-insecure-123456'", f"SECRET_KEY = '{REDACTED}'"),
        ("access_token=ya29.a0AfH6SMBx", f"access_token={REDACTED}"),
    ],
)
def test_keyword_and_url_secrets_keep_the_label(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASS=hunter2hunter2", f"DB_PASS={REDACTED}"),
        ("export REDIS_PASS='hunter2hunter2'", f"export REDIS_PASS='{REDACTED}'"),
        ("MYSQL_ROOT_PASSWORD=s3cretpw", f"MYSQL_ROOT_PASSWORD={REDACTED}"),
        ("SMTP_PASSWORD: 'mail-pass-99'", f"SMTP_PASSWORD: '{REDACTED}'"),
        ("passphrase: correct-horse", f"passphrase: {REDACTED}"),
        ('{"Passphrase": "correct-horse"}', f'{{"Passphrase": "{REDACTED}"}}'),
        ("curl -u admin:Tr0ub4dor https://x.io", f"curl -u admin:{REDACTED} https://x.io"),
        ("curl -u admin:pass https://x.io", f"curl -u admin:{REDACTED} https://x.io"),
        ("curl -su 'admin:pass' https://x.io", f"curl -su 'admin:{REDACTED}' https://x.io"),
        ("curl -X POST --user=admin:pass x.io", f"curl -X POST --user=admin:{REDACTED} x.io"),
        ("curl --user admin:Tr0ub4dor x.io", f"curl --user admin:{REDACTED} x.io"),
        (
            "https://app.example/cb?code=4/0AX4XfWhabcdef&state=keep",
            f"https://app.example/cb?code={REDACTED}&state=keep",
        ),
        ("/cb?state=keep&code=SplxlOBeZQQYbYS6WxSbIA", f"/cb?state=keep&code={REDACTED}"),
        ("refresh_token=1//0gAbCdEfGh&x=1", f"refresh_token={REDACTED}&x=1"),
        ('"refreshToken": "rt-abcdefgh"', f'"refreshToken": "{REDACTED}"'),
        ("id_token=abcdefgh12345", f"id_token={REDACTED}"),
        (
            "client_id=app&client_secret=abcdefgh12&grant_type=authorization_code",
            f"client_id=app&client_secret={REDACTED}&grant_type=authorization_code",
        ),
        (
            "https://x.io/cb#access_token=ya29.abcdef&state=keep&token_type=Bearer",
            f"https://x.io/cb#access_token={REDACTED}&state=keep&token_type=Bearer",
        ),
        # an "&" that starts no parameter is part of the value
        ("password=ab&cd1234 next", f"password={REDACTED} next"),
    ],
)
def test_more_secret_shapes(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "3 passed, 1 skipped in 0.12s; passed=1234567",
        "bypass=enabled-for-tests",
        "the exit code=1234567 and error code: invalid_request",
        '{"code": "llm_timeout", "error": "the auxiliary model timed out"}',
        "git push -u origin main; sort -u names.txt; python -u app.py",
        "docker run -u 1000:1000 image; docker exec -u root:root box sh",
        "pip install -U package-name==1.2.3",
        "compass: north-north-east",
    ],
)
def test_new_shapes_leave_ordinary_text(text: str) -> None:
    assert redact(text) == text


def test_url_password_keeps_the_user() -> None:
    out = redact("connect to postgres://user:pass@host/db now")
    assert out == f"connect to postgres://user:{REDACTED}@host/db now"
    assert "pass@" not in out


@pytest.mark.parametrize("kind", ["RSA ", "", "OPENSSH ", "EC ", "ENCRYPTED "])
def test_private_key_block(kind: str) -> None:
    block = PEM.replace("RSA ", kind)
    text = f"key file:\n{block}\nend of file"
    assert redact(text) == f"key file:\n{REDACTED}\nend of file"


def test_several_secrets_in_one_text() -> None:
    text = f"a={AWS} b={GITHUB}\n{PEM}\nAuthorization: Bearer {ALNUM}"
    assert (
        redact(text) == f"a={REDACTED} b={REDACTED}\n{REDACTED}\nAuthorization: Bearer {REDACTED}"
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "/home/user/project/src/compaction/tokens.py:42: error: missing return",
        "C:\\Users\\dev\\AppData\\Local\\Temp\\build-output.log",
        "response = client.create(model='gpt-4o', max_tokens=12000, temperature=0)",
        "the token count is 123456 and the prompt has 4000 characters",
        "tokens=12000 total_tokens: 5000",
        "http://localhost:8080/api/v1/sessions?limit=50",
        "https://example.com:8443/path/to/page#section",
        "ssh://git@github.com:22/org/repo.git",
        "commit 6ab5665e09672987e200fe0a1b2c3d4e5f607182",
        "def estimate(text: str) -> int:\n    return len(text) // 4  # secret sauce",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0B\n"
        "-----END CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"
        "-----END PUBLIC KEY-----",
        "The password reset flow sends an email; the secret is to retry.",
        "Use the Bearer scheme for auth.",
        "npm install --save-dev typescript",
        "你好，这是一个普通的中文句子，没有任何密钥。",
    ],
)
def test_no_false_positives_on_ordinary_text(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "see docs/task-scheduling-overview.md",
        "pip install dask-kubernetes-operator",
        "src/components/task-list-item-renderer.tsx",
    ],
)
def test_no_false_positives_on_kebab_case_names_containing_sk(text: str) -> None:
    assert redact(text) == text


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


def test_combine_keeps_each_rule_once_in_rules_for_order() -> None:
    both = rules_for(f"{AWS} {OPENAI} password=hunter22")
    aws, openai = rules_for(AWS), rules_for(f"{OPENAI} password=hunter22")
    assert combine(openai, aws, openai) == both
    assert combine() == ()


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
