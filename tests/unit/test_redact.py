"""Secret redaction (compaction/core/redact.py; docs/architecture.md, "The algorithm").

The fake secrets are assembled from pieces so that the file itself does not look like it
leaks real keys to a secret scanner.
"""

from __future__ import annotations

import pytest

from compaction.core.redact import (
    REDACTED,
    redact,
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
        (  # base64 holds "/" but no ".": still a token, not a file
            "Authorization: Token ab/cd1234567890efgh+ij/kl==",
            f"Authorization: Token {REDACTED}",
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
        # a file named after "token" (docs/survival.md): the next line, or a path on the same
        "cache_token\nsrc/about/mod_859.py:353: x = 1",
        "grep token src/about/mod_859.py",
        "Bearer ../vendor/lib/auth_12.js",
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
