"""Secret redaction (docs/architecture.md, "The algorithm"): applied to every text before it reaches
the auxiliary model, and again to what the model writes back.

Every rule starts with a literal (a key prefix, a keyword in its usual casings), and runs only on
a text that contains that literal: the substring test is C-speed and a literal-led regex lets the
engine skip ahead. One case-insensitive alternation over whole transcripts was what made other
compressors slow (measured: 30 ms per 250 kB against under 1 ms).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compaction.core.blocks import blocks

REDACTED = "[REDACTED]"

_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


@dataclass(frozen=True, slots=True, eq=False)  # identity: compared and hashed fast
class _Rule:
    literal: str
    pattern: re.Pattern[str]
    #: keep the literal and what the pattern's ``head`` group matched, replace the rest
    keep_head: bool
    #: the literal must start a word ("task-scheduling" holds "sk-" but is no key); checked on
    #: the match, not in the pattern, so the pattern stays literal-led and fast to search
    word: bool

    @property
    def in_context(self) -> bool:
        """Whether what the rule takes out is a secret by its context (a keyword before it, the
        lines of a key block) and not by its own shape, as a provider's key is."""
        return self.keep_head or not self.word

    def secret(self, match: re.Match[str]) -> str | None:
        """What the rule takes out at ``match``; None where the match is no secret after all."""
        start = match.start()
        if self.word and start and match.string[start - 1] in _WORD_CHARS:
            return None
        return match.group(0)[match.end("head") - start :] if self.keep_head else match.group(0)

    def replace(self, match: re.Match[str]) -> str:
        if self.secret(match) is None:
            return match.group(0)
        return f"{match.group('head')}{REDACTED}" if self.keep_head else REDACTED


def _rule(literal: str, rest: str, *, keep_head: bool = False, word: bool = True) -> _Rule:
    return _Rule(literal, re.compile(f"(?P<head>{re.escape(literal)}{rest}"), keep_head, word)


def _casings(word: str) -> list[str]:
    return list(dict.fromkeys([word, word.upper(), word.capitalize()]))


# A value is not a call (``secrets = load_secrets()``) and stops at an "&" that starts the next
# query parameter (``access_token=x&state=y``); a bare "token" value holds a digit and is not a
# path; "Basic" takes base64 only. A header's scheme and its value share a line, and a value
# with a "/" before a dotted name is a file (``token src/app/mod_12.py``; base64 has no ".",
# a JWT is matched by "eyJ").
_VALUE = r"[\"']?\s*[:=]\s*[\"']?)(?:[^\s\"',;()&]|&(?![\w.\-]+=)){6,}(?![\w(])"
_NOT_FILE = r"(?![A-Za-z0-9._~+\-]*/[A-Za-z0-9._~+/\-]*\.[A-Za-z])"
_BEARER = r"[ \t]+)(?!/)" + _NOT_FILE + r"[A-Za-z0-9._~+/\-]{16,}=*"
_TOKEN = r"[ \t]+)(?=[A-Za-z0-9._~+/\-]*\d)(?!/)" + _NOT_FILE + r"[A-Za-z0-9._~+/\-]{16,}=*"
_BASIC = r"[ \t]+)[A-Za-z0-9+/]{16,}={0,2}(?![\w-])"
# ``curl -u user:password`` (or ``-su``, ``--user``), anywhere on the command's line
_CURL_USER = r"\b[^\n]*?\s(?:-[A-Za-z]*u|--user)(?:\s+|=)[\"']?[^\s:\"']+:)[^\s\"']+"

_RULES: tuple[_Rule, ...] = (
    _rule(
        "-----BEGIN",
        r" (?:[A-Z0-9]+ )*PRIVATE KEY-----)[\s\S]*?-----END (?:[A-Z0-9]+ )*"
        r"PRIVATE KEY-----",
        word=False,
    ),
    # Provider key shapes: OpenAI / Anthropic / DeepSeek, AWS, GitHub, Slack, Google, Stripe,
    # Hugging Face, npm, GitLab.
    _rule("sk-", r")(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{16,}"),
    _rule("AKIA", r")[0-9A-Z]{16}"),
    *(_rule(p, r")[A-Za-z0-9]{30,}") for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    _rule("github_pat_", r")[A-Za-z0-9_]{30,}"),
    *(_rule(f"xox{c}-", r")[A-Za-z0-9\-]{10,}") for c in "abposr"),
    _rule("AIza", r")[0-9A-Za-z_\-]{35}"),
    *(_rule(f"{p}_live_", r")[A-Za-z0-9]{20,}") for p in ("sk", "pk", "rk")),
    _rule("hf_", r")[A-Za-z0-9]{30,}"),
    _rule("npm_", r")[A-Za-z0-9]{36}"),
    _rule("glpat-", r")[A-Za-z0-9_\-]{20,}"),
    _rule("eyJ", r")[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    # user:password@ inside a URL
    _rule("://", r"[^\s:/@]+:)[^\s@/]+(?=@)", keep_head=True, word=False),
    _rule("curl", _CURL_USER, keep_head=True),
    # an OAuth authorization code in a redirect URL
    *(_rule(f"{c}code=", r")[^\s&#\"'<>]{8,}", keep_head=True, word=False) for c in "?&"),
    *(_rule(w, _BEARER, keep_head=True) for w in _casings("bearer")),
    _rule("Basic", _BASIC, keep_head=True),
    *(_rule(w, _TOKEN, keep_head=True) for w in ("Token", "token")),
    # ``DB_PASS=``, ``redis_pass:`` (not "passed", not "PASS=" alone: "pass" is in every test
    # log, and a rule chosen is a pass over the text)
    *(_rule(w, _VALUE, keep_head=True, word=False) for w in ("_PASS", "_pass")),
    *(
        _rule(w, r"[A-Za-z0-9_\-]*" + _VALUE, keep_head=True, word=False)
        for word in (
            "api_key",
            "api-key",
            "apikey",
            "apiKey",
            "secret",
            "password",
            "passwd",
            "passphrase",
            "access_token",
            "accessToken",
            "auth_token",
            "authToken",
            "refresh_token",
            "refreshToken",
            "id_token",
            "idToken",
            "private_key",
            "privateKey",
            "client_secret",
        )
        for w in _casings(word)
    ),
)


_GATE_WORDS = (
    "-----begin",
    "sk-",
    "akia",
    "gh",
    "github",
    "xox",
    "aiza",
    "_live_",
    "hf_",
    "npm_",
    "glpat-",
    "eyj",
    "://",
    "curl",
    "code=",
    "bearer",
    "basic",
    "token",
    "api",
    "secret",
    "pass",
    "private",
)


def _gate(literal: str) -> bytes:
    """The first gate word the lower-cased literal holds: one test rules out its family."""
    return next(word for word in _GATE_WORDS if word in literal.lower()).encode()


# gate word -> lower-cased literal -> its rules (casings), in UTF-8: every literal is ASCII, and
# ASCII bytes there are ASCII characters only (a lone surrogate passes as bytes none holds).
_GATES: dict[bytes, dict[bytes, list[_Rule]]] = {}
for _r in _RULES:
    _GATES.setdefault(_gate(_r.literal), {}).setdefault(_r.literal.lower().encode(), []).append(_r)
_GATE_PATTERNS = {gate: re.compile(re.escape(gate)) for gate in _GATES}
#: Bytes kept either side of a gate word where it occurs: a literal there lies within them.
_NEAR = max(len(rule.literal) for rule in _RULES)
#: Families whose one literal is their gate word (``://``, ``sk-``): no text near it to gather
#: (a research agent's words hold hundreds of ``://``; docs/benchmarks.md, "Versus Hermes").
_ALONE = {gate: f[gate] for gate, f in _GATES.items() if list(f) == [gate]}

#: The rules to run on a text, as chosen by ``rules_for``.
Rules = tuple[_Rule, ...]


def rules_for(text: str) -> Rules:
    """The rules whose literal occurs in ``text``.

    No literal holds white space, so the rules chosen on a text also serve every text made of
    its words (or of pieces of them): the engine chooses them once on the distinct words of a
    middle, a quarter of its size, and runs them over the serialized turns. The tests run on
    UTF-8 bytes (one emoji makes a text 4 bytes a character, slow to lower-case), a family's
    literals only near its gate word."""
    raw = text.encode("utf-8", "surrogatepass")
    lowered = raw.lower()  # ASCII letters only: the literals' casings
    chosen: list[_Rule] = []
    for gate, families in _GATES.items():
        if (first := lowered.find(gate)) == -1:
            continue
        if (alone := _ALONE.get(gate)) is not None:  # found in the text, in one of its casings
            chosen += (rule for rule in alone if rule.literal.encode() in raw)
            continue
        found = _GATE_PATTERNS[gate].finditer(lowered, first)  # not the text searched already
        spans = [(max(at.start() - _NEAR, 0), at.end() + _NEAR) for at in found]
        # Joined by a byte no literal holds: none is found across two.
        near = b"\n".join([lowered[start:end] for start, end in spans])
        near_raw = b"\n".join([raw[start:end] for start, end in spans])
        chosen += (
            rule
            for key, rules in families.items()
            if key in near
            for rule in rules
            if rule.literal.encode() in near_raw
        )
    return tuple(chosen)


def redact(text: str, rules: Rules | None = None) -> str:
    """``text`` with every secret shape replaced by ``[REDACTED]``; ``rules`` (from
    ``rules_for`` on a text holding every word of this one) saves choosing them again."""
    for rule in rules_for(text) if rules is None else rules:
        text = rule.pattern.sub(rule.replace, text)
    return text


# No pattern crosses it but the private-key block: "\n" ends every value and NUL is neither
# white space (which ``\s`` would take, as it takes "\x1e") nor a key character.
_SEPARATOR = "\n\x00\n"


def redact_many(texts: list[str], rules: Rules | None = None) -> list[str]:
    """``[redact(t, rules) for t in texts]``, a cache-sized block of joined texts at a time (the
    literal tests are per call, so one call over many small texts is much cheaper)."""
    if rules is not None and not rules:  # none to run: the texts are not even joined
        return list(texts)
    return [part for block in blocks(texts) for part in _redact_block(block, rules)]


def _redact_block(texts: Sequence[str], rules: Rules | None) -> list[str]:
    joined = _SEPARATOR.join(texts)
    # A text holding a NUL is redacted alone; else the separators are the only NULs (one C-level
    # count, where testing each text for the separator was a search per text).
    if len(texts) < 2 or joined.count("\x00") != len(texts) - 1:
        return [redact(t, rules) for t in texts]
    redacted = redact(joined, rules)
    if redacted is joined:  # nothing matched (``re.sub`` returns its very input): no copies
        return list(texts)
    parts = redacted.split(_SEPARATOR)
    if len(parts) != len(texts):  # a secret spanned two entries: redact them one by one
        return [redact(t, rules) for t in texts]
    return parts


#: Shorter secrets are looked for only in their context: away from it they are common words.
MIN_HIDDEN_CHARS = 6
_NOT_ALNUM_BEFORE = "(?<![A-Za-z0-9])"
_NOT_ALNUM_AFTER = "(?![A-Za-z0-9])"


class Secrets:
    """What redaction takes out of some texts, looked for again where their context is gone.

    The rules judge a value by what stands before it (``aws_secret_access_key = wJal…``,
    ``curl -u admin:…``); what is made from the texts (an identifier listed alone, a line a
    summary quotes) can hold the value without it. ``hide`` replaces each one found whole (no
    letter or digit running on), ``outside`` also drops what is a piece of one."""

    __slots__ = ("_joined", "values")

    def __init__(self, values: Iterable[str]) -> None:
        lines = {line.strip() for value in values for line in value.splitlines()}
        self.values = frozenset(line for line in lines if len(line) >= MIN_HIDDEN_CHARS)
        self._joined = "\n".join(self.values)

    @classmethod
    def of(cls, texts: Sequence[str], rules: Rules) -> Secrets:
        """The secrets ``rules`` (chosen on words holding every word of ``texts``) find there by
        their context (a key's shape is found wherever it is)."""
        rules = tuple(rule for rule in rules if rule.in_context)
        found: set[str] = set()
        for block in blocks(texts) if rules else ():
            joined = _SEPARATOR.join(block)
            for rule in rules:
                for match in rule.pattern.finditer(joined):
                    secret = rule.secret(match)
                    # one spanning two texts is none of either (as ``redact_many`` judges it)
                    if secret and _SEPARATOR not in secret:
                        found.add(secret)
        return cls(found)

    def __bool__(self) -> bool:
        return bool(self.values)

    def hide(self, text: str) -> str:
        present = [value for value in self.values if value in text]
        if not present:
            return text
        present.sort(key=len, reverse=True)  # the longest first where one holds another
        alternatives = "|".join(map(re.escape, present))
        return re.sub(f"{_NOT_ALNUM_BEFORE}(?:{alternatives}){_NOT_ALNUM_AFTER}", REDACTED, text)

    def outside(self, items: Iterable[str]) -> list[str]:
        """``items`` (single lines) without those that are a secret or a piece of one, the
        secrets the others hold hidden."""
        if not self.values:
            return list(items)
        kept = [item for item in items if item not in self._joined]
        # One search per secret over all the items joined (no item holds a newline), not one
        # per secret per item: thousands of ids against a few secrets, mostly none of them
        # present; only the items holding one of those present are hidden (docs/benchmarks.md).
        joined = "\n".join(kept)
        present = Secrets(())
        present.values = frozenset(value for value in self.values if value in joined)
        if not present.values:
            return kept
        return [present.hide(item) for item in kept]
