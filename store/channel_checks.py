"""What a model channel may be given (docs/security.md, "Secrets"): the variable its key is
read from, its base URL, its sizes and prices, and no stored key following a new destination.
Checked before anything is stored; used by store/channels.py."""

from __future__ import annotations

import fnmatch
import re
from urllib.parse import urlsplit

from compaction.core.contract import valid_name
from compaction.core.errors import InvalidRequest
from compaction.store.models import PROVIDERS, ModelChannel
from compaction.store.sessions import check_name

#: the variables a channel may read its key from: the default of
#: ``COMPACTION_CHANNEL_KEY_ENV_PATTERN`` (service/settings.py)
KEY_ENV_PATTERN = "*_API_KEY"
#: never a channel's key, whatever the pattern: the service's own settings hold the database
#: URL and the gateway token, and they are read whatever the case of their names
RESERVED_ENV_PREFIX = "COMPACTION_"
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: what a base URL may be: the SDKs speak HTTP, and a screen may show it as a link
URL_SCHEMES = ("http", "https")


def key_env_allowed(name: str, pattern: str = KEY_ENV_PATTERN) -> bool:
    """Whether a channel may read its key from the variable ``name``."""
    return (
        _VARIABLE.fullmatch(name) is not None
        and not name.upper().startswith(RESERVED_ENV_PREFIX)
        and fnmatch.fnmatchcase(name, pattern)
    )


def key_env_rule(pattern: str) -> str:
    return f"COMPACTION_CHANNEL_KEY_ENV_PATTERN {pattern!r}, never COMPACTION_*"


def url_allowed(url: str) -> bool:
    if any(c.isspace() or not c.isprintable() for c in url):
        return False
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError: not a number, or out of range
    except ValueError:
        return False
    return parts.scheme.lower() in URL_SCHEMES and bool(parts.hostname) and port != 0


def check_fields(
    provider: str | None,
    api_key: str | None,
    api_key_env: str | None,
    base_url: str | None,
    key_env_pattern: str,
) -> None:
    """What a channel is given, before anything is stored. Neither the variable's name nor the
    URL is echoed: a key pasted in the wrong field, or a URL's credentials."""
    if provider is not None and provider not in PROVIDERS:
        raise InvalidRequest(f"unknown provider {provider!r}; expected one of {PROVIDERS}")
    if api_key and api_key_env:
        raise InvalidRequest("give the key or the variable that holds it, not both")
    if api_key_env and not key_env_allowed(api_key_env, key_env_pattern):
        raise InvalidRequest(
            "apiKeyEnv: a channel reads its key only from a variable matching "
            f"{key_env_rule(key_env_pattern)}"
        )
    if base_url is not None and not url_allowed(base_url):
        raise InvalidRequest("baseUrl: an http or https URL with a host")


#: the longest base URL and key their columns hold (store/models.py)
URL_MAX_CHARS = KEY_MAX_CHARS = 512


def check_sizes(
    name: str | None,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    api_key_env: str | None,
) -> None:
    """What no column holds is the caller's mistake, refused naming the field, never a
    database error (docs/architecture.md, "Tables"). The key is never echoed."""
    check_name(name, "name")
    check_name(model, "model")
    check_name(api_key_env or None, "apiKeyEnv")
    if base_url is not None and len(base_url) > URL_MAX_CHARS:
        raise InvalidRequest(f"baseUrl: at most {URL_MAX_CHARS} characters")
    if api_key and not valid_name(api_key, KEY_MAX_CHARS):
        raise InvalidRequest(
            f"apiKey: at most {KEY_MAX_CHARS} characters, without control characters"
        )


#: the highest price per million tokens a channel may be given (USD): far above any model's
MAX_PRICE = 100_000.0


def price_columns(
    price_input: float | None, price_output: float | None, clear: bool = False
) -> dict[str, float | None]:
    """The price columns an add or an edit sets (docs/architecture.md, "Receipt"): each given
    one, checked; ``clear`` sets both to none (and takes no price with it)."""
    given = {"price_input_per_mtok": price_input, "price_output_per_mtok": price_output}
    if clear:
        if price_input is not None or price_output is not None:
            raise InvalidRequest("set the prices or clear them, not both")
        return dict.fromkeys(given)
    for column, value in given.items():
        field = "priceInput" if column == "price_input_per_mtok" else "priceOutput"
        if value is not None and not (0 <= value <= MAX_PRICE):  # NaN fails both
            raise InvalidRequest(f"{field}: USD per million tokens, from 0 to {MAX_PRICE:g}")
    return {k: v for k, v in given.items() if v is not None}


def refuse_new_destination(
    row: ModelChannel, provider: str | None, base_url: str | None, rekeyed: bool
) -> None:
    """A stored key (or variable) never follows a new base URL or provider: the edit gives the
    key again or clears it. ``base_url`` is the edited value (``None``: cleared)."""
    moved = row.provider != (provider or row.provider) or row.base_url != base_url
    if moved and (row.api_key or row.api_key_env) and not rekeyed:
        raise InvalidRequest(
            f"channel {row.name!r} would send its key to a new destination (baseUrl or "
            "provider): give the key again (apiKey or apiKeyEnv; --api-key or --api-key-env), "
            "or clear it"
        )
