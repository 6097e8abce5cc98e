"""Where the ledger's identifiers are found (docs/architecture.md, "The algorithm"): commands in
tool-call arguments, error lines in what the user and the tools said, paths, URLs, ids and
values in the distinct words of the turns.

Candidates are found on whitespace-separated words, pre-filtered by a cheap character test:
regexes then run over the few words that can match instead of every position of the text.
"""

from __future__ import annotations

import json
import operator
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, compress, filterfalse

from compaction.core.messages import ToolCall

_COMMAND_KEYS = ("command", "cmd", "script")
#: Longer items are not identifiers a reader copies (a line of prose, a minified file).
MAX_ITEM_CHARS = 300

# Stops at CJK punctuation: "见 https://x.org/a，然后" must not take the comma and what follows;
# and at a backslash, which no URL holds: in JSON-encoded arguments it starts an escape
# (``href=\"https://x.org\"``, ``https://x.org/a\n``).
_URL = re.compile(r"https?://[^\s<>\"'`\]}|\\\u3000-\u303f\uff00-\uffef]+")
_URL_END = ".,;:!?*"
# Possessive runs (``++``, ``{m,n}+``) where what follows can never be what a run gave back (a
# run of name characters is followed by "/", which it cannot hold): no backtracking into them.
_PATH_BODY = r"(?:~|\.{1,2})?/?(?:[\w.@+-]++/)+[\w.@+-]*[\w@+-]"
_PATH = re.compile(r"(?<![\w:/.@%-])" + _PATH_BODY)
# ``_PATH`` for an all-ASCII text (``str.isascii`` reads a flag, no scan): there ``re.ASCII``'s
# ``\w``, ``\d`` and ``\s`` match what the Unicode classes match (the only ASCII characters
# Unicode ``\s`` adds, U+001C..U+001F, split words: words joined by spaces hold none), and a
# byte test is cheaper than a Unicode category (docs/benchmarks.md, "Versus Hermes 0.19.0").
_PATH_ASCII = re.compile(_PATH.pattern, re.ASCII)
# ``_PATH`` led by the character before a path, consumed (searched in a text that starts with a
# space): the engine skips at C speed to where one can start, where the lookbehind is tried at
# every position (twice as fast on URLs). The same paths, unless one ends with "+", the one
# character a path ends with that may stand before another: then ``_PATH`` searches again.
_PATH_LED = re.compile(r"[^\w:/.@%-](" + _PATH_BODY + ")")
_PATHS = {True: (_PATH_ASCII, re.compile(_PATH_LED.pattern, re.ASCII)), False: (_PATH, _PATH_LED)}
# Anchored on the extension's literal dot so the regex engine can skip ahead; the name in
# front of it is found by walking back (see ``_files``).
_FILE_EXT = re.compile(
    r"\.(?:py|pyi|js|jsx|ts|tsx|go|rs|rb|java|kt|c|h|cc|cpp|hpp|cs|php|ex|exs|erl|swift|scala"
    r"|sh|sql|json|ya?ml|toml|ini|cfg|md|rst|txt|html|css|lock|vue|proto|xml|csv|log|env)(?![\w-])"
)
# A file name's characters, matched on the text reversed: the name in front of the extension is
# the run of them that starts at the dot, read backwards (one C-speed match per name).
_NAME_BACKWARDS = re.compile(r"[A-Za-z0-9_.\-]*")
# One literal-led regex per hint: the engine jumps between occurrences of the literal, where one
# alternation would be tried at every position of the text (measured 3x slower). "Error\b",
# "rror:" and "error[" share one literal, "rror" (a pass over the text each, saved): a match
# starts a letter later than "Error", which neither moves its line nor its quote (``_quoted``
# walks back over letters).
_ERROR_HINTS = tuple(
    re.compile(hint)
    for hint in (
        "Traceback",
        r"rror(?:(?<=Error)\b|:|(?<=error)\[)",
        r"Exception\b",
        "FAILED",
        "fatal:",
        "panic:",
    )
)
# What marks a word worth searching, as bytes to delete from the UTF-8 of the words joined by
# spaces: a word is kept when something of it is left (``_kept``). Digits, control characters
# and anything non-ASCII are left for ids and values (what ``str.strip`` of every printable
# ASCII non-digit leaves); "/" and "." for paths, files and URLs.
_NOT_NUMBERED = bytes(c for c in range(33, 127) if not chr(c).isdigit())
_NOT_PATHY = bytes(c for c in range(256) if c not in b"/. ")
# Ids and values in one pass (one regex beats five over the same text). Led by the character
# before an id (one that no id runs on from) or by a currency sign: a pattern led by a character
# set lets the engine skip at C speed to the next place where one can start, where a leading
# lookbehind is tried at every position (25% faster). The text searched starts with a space (an
# id at its very start has a character before it). Groups, for ``findall``'s tuples (no match
# object per id): the leading character, the money after its sign, an id (a UUID, a hash or
# code: an id only when it mixes digits and letters, else a count or a word; a snake_case_id),
# a version. One match fills one of the last three. Runs are possessive, as in ``_PATH``
# (10-20% faster on the shared transcripts). A UUID is tried after a hash or code: where one
# of them matches the other cannot (a UUID's run ends at its "-"), and ids are mostly hashes.
_TOKEN = re.compile(
    r"([^\w-])(?:(?<=[$€£¥])(\s?\d[\d,]*(?:\.\d+)?)"
    r"|(?=[0-9a-zA-Z])(?:([0-9a-f]{7,40}+|[A-Z0-9]{5,12}+"
    r"|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}|[a-z]++(?:_[a-z]++)*+_\d{2,})"
    r"|(v?\d++\.\d++\.\d++(?:[-.+]\w++)?))(?![\w-]))"
)
_TOKEN_ASCII = re.compile(_TOKEN.pattern, re.ASCII)  # as ``_PATH_ASCII``
# ``_tokened``'s marks of the words' UTF-8: a space stays, a sign ("_", ".", "$", a byte of
# the UTF-8 of "€", "£", "¥") is _PASS, a member of a run is _MEMBER (and five in a row pass).
_PASS, _MEMBER, _SIGNS = b"\x01", b"\x02", b"_.$\xa3\xa5\xac"
_RUNS = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"
_MARKS = bytes(32 if c == 32 else 1 if c in _SIGNS else 2 if c in _RUNS else 0 for c in range(256))
_NOT_PASSED = b"\x00" + _MEMBER
#: A currency sign's last byte: one before a space ends a word.
_SIGN_ENDS = tuple(sign.encode()[-1:] for sign in "$€£¥")


def commands(calls: Iterable[ToolCall]) -> Iterable[str]:
    """The commands the calls ran: the first line of each ``command``, ``cmd`` or ``script``
    argument."""
    for call in calls:
        arguments = call.arguments
        # A key is written quoted, unless a \\u escape spells a letter of it: arguments that
        # name a command only inside a value (a file's "<script>") are not decoded.
        # _COMMAND_KEYS spelled out rather than any(...): this runs for every tool call.
        if not ('"command"' in arguments or '"cmd"' in arguments or '"script"' in arguments) and (
            "\\u" not in arguments
            or not ("command" in arguments or "cmd" in arguments or "script" in arguments)
        ):
            continue
        try:
            args = json.loads(arguments)
        except (ValueError, RecursionError):  # stored before MAX_ARGUMENTS_DEPTH was checked
            continue
        if not isinstance(args, dict):
            continue
        for key in _COMMAND_KEYS:
            value = args.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str) and value.strip():
                # A multi-line script is remembered by its first line.
                yield value.strip().split("\n", 1)[0]


def error_lines(text: str) -> Iterable[str]:
    """Every line holding an error hint, in text order. A line too long to list (prose, a
    minified log) gives, for each hint, the error quoted in it: from the word holding the hint
    to the end of its sentence ("... failed with ValueError: bad input, so I ...")."""
    hints: dict[int, list[int]] = {}  # line start -> hint offsets
    for hint in _ERROR_HINTS:
        for match in hint.finditer(text):
            at = match.start()
            hints.setdefault(text.rfind("\n", 0, at) + 1, []).append(at)
    for start in sorted(hints):
        end = text.find("\n", start)
        line = text[start : end if end != -1 else len(text)]
        # What a terminal shows after a carriage return (progress bars) is what is judged.
        if len(line.rsplit("\r", 1)[-1].strip()) <= MAX_ITEM_CHARS:
            yield line
        else:
            yield from dict.fromkeys(_quoted(line, at - start) for at in sorted(hints[start]))


# An error an assistant names in its own prose ("the run failed with a KeyError: 'id'."): a
# capitalized name ending in Error or Exception, not the bare word ("Error handling").
_NAMED_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")


def prose_errors(text: str) -> Iterable[str]:
    """The errors an assistant's prose names, each quoted from its name to the end of its
    sentence (``_quoted``): where an agent's own account of a failure keeps it."""
    for match in _NAMED_ERROR.finditer(text):
        at = match.start()
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        yield _quoted(text[start : end if end != -1 else len(text)], at - start)


def _quoted(line: str, at: int) -> str:
    """The error at ``at`` in a long line: its whole first word, up to the end of the sentence
    (or ``MAX_ITEM_CHARS``)."""
    start = at
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_."):
        start -= 1
    ends = [i for i in (line.find(". ", at), line.find("\u3002", at)) if i != -1]
    end = min([*ends, len(line), start + MAX_ITEM_CHARS])
    return line[start:end].rstrip()


def _files(dotted: str) -> Iterable[tuple[int, str]]:
    """Bare file names (``setup.py``) with their offsets; a name right after a ``/`` belongs to
    a path instead."""
    backwards, size = dotted[::-1], len(dotted)
    for match in _FILE_EXT.finditer(dotted):
        run = _NAME_BACKWARDS.match(backwards, size - match.start())
        assert run is not None  # the pattern matches an empty run too
        start = size - run.end()
        name = dotted[start : match.end()].lstrip(".")
        if name[: -len(match.group(0))] and (start == 0 or dotted[start - 1] not in "/\\"):
            yield start, name


def _paths(words: Sequence[str]) -> list[tuple[int, str]]:
    """Paths with their offsets in ``" ".join(words)``. A path holds a slash, so only the words
    with one are searched (a third of the text: the regex tries every position it is given)."""
    slashed = [i for i, word in enumerate(words) if "/" in word]
    # Word i starts at (length of the words before it) + i in a text joined with spaces.
    before = list(accumulate(map(len, words), initial=0))
    # No path runs from one word into the next (none holds a space), so the ASCII words are
    # searched apart with the cheaper pattern; ``scan`` sorts the paths by offset.
    ascii_words = list(map(str.isascii, (words[i] for i in slashed)))
    plain = list(compress(slashed, ascii_words))
    other = list(compress(slashed, map(operator.not_, ascii_words)))
    return [*_found(words, before, plain, True), *_found(words, before, other, False)]


def _found(
    words: Sequence[str], before: list[int], chosen: list[int], ascii_only: bool
) -> list[tuple[int, str]]:
    """The paths in the ``chosen`` words, with their offsets in the words joined by spaces
    (``before``: the lengths of the words before each)."""
    text = " ".join([words[i] for i in chosen])
    local = list(accumulate((len(words[i]) for i in chosen), initial=0))
    local_starts = [length + k for k, length in enumerate(local)]
    # What turns an offset in word k of ``text`` into one in the whole text: one add per path.
    shift = [before[i] + i - at for i, at in zip(chosen, local_starts[:-1], strict=True)]
    behind, led = _PATHS[ascii_only]
    found = [(match.start(1) - 1, match.group(1)) for match in led.finditer(" " + text)]
    if any(path[-1] == "+" for _, path in found):
        found = [(match.start(), match.group(0)) for match in behind.finditer(text)]
    return [
        (shift[bisect_right(local_starts, at) - 1] + at, path)
        for at, path in found
        if _is_path(path)
    ]


def scan(distinct: Sequence[str]) -> dict[str, list[str]]:
    """Paths, URLs, ids and values of the distinct words (no white space in any), each kind in
    order of appearance (an item first appears in the first word that holds it)."""
    raw = " ".join(distinct).encode("utf-8", "surrogatepass")
    pathy_words = _kept(distinct, raw, _NOT_PATHY)  # none all letters: each holds "/" or "."
    pathy = " ".join(pathy_words)
    # Letters alone (CJK words are non-ASCII) hold no id or value; an ASCII word kept holds a
    # digit or a control character: no test of each then.
    numbered = _kept(distinct, raw, _NOT_NUMBERED)
    if not raw.isascii():
        numbered = list(filterfalse(str.isalpha, numbered))
    searched = " " + " ".join(_tokened(numbered))
    tokens = (_TOKEN_ASCII if searched.isascii() else _TOKEN).findall(searched)
    return {
        "paths": [item for _, item in sorted([*_paths(pathy_words), *_files(pathy)])],
        "urls": [_url(u) for u in _URL.findall(pathy)],
        "ids": _ids(tokens),
        "values": [
            version or sign + money
            for sign, money, _, version in compress(tokens, map(operator.not_, _found_ids(tokens)))
        ],
    }


def _found_ids(tokens: list[tuple[str, str, str, str]]) -> Iterator[str]:
    """The id group of each of ``_TOKEN``'s matches ("" where it matched a value)."""
    return map(operator.itemgetter(2), tokens)


def _ids(tokens: list[tuple[str, str, str, str]]) -> list[str]:
    """The ids of ``_TOKEN``'s matches: those that mix digits and letters (a UUID holds "-", a
    snake_case_id "_": never all digits or all letters). Filtered at C speed, not a loop."""
    return list(
        filterfalse(str.isalpha, filterfalse(str.isdigit, filter(None, _found_ids(tokens))))
    )


def _tokened(words: list[str]) -> list[str]:
    """The ``words`` where ``_TOKEN`` can match, in order: a superset, those holding a sign
    (``_`` of a snake_case id, ``.`` of a version, a currency sign) or 5 ``[0-9A-Za-f]`` in a
    row (a code, a hash, a UUID). The others (``name(12)``, ``2,508``, ``12→``: half of a file
    listing's numbered words) cost the regex a try at each of their punctuation marks and give
    nothing (docs/benchmarks.md, "Versus Hermes 0.19.0"). Marked at C speed."""
    raw = " ".join(words).encode("utf-8", "surrogatepass")
    marked = raw.translate(_MARKS).replace(_MEMBER * 5, _PASS * 5)
    # An amount runs on from its sign's word into the next (``x=€ 1,000.50``): the word after
    # one ending in a sign is kept too, as it would follow it in the text searched.
    if not any(end in raw and end + b" " in raw for end in _SIGN_ENDS):
        return _kept(words, marked, _NOT_PASSED)
    kept = marked.translate(None, _NOT_PASSED).split(b" ")
    for at, text in enumerate(words[:-1]):
        if text[-1] in "$€£¥":
            kept[at + 1] = _PASS
    return list(compress(words, kept))


def _kept(words: Sequence[str], raw: bytes, delete: bytes) -> list[str]:
    """The words of which something is left once ``delete`` is deleted from ``raw`` (their
    UTF-8, joined by spaces): a C-speed test of every word (multi-byte characters are
    non-ASCII bytes, never a space)."""
    return list(compress(words, raw.translate(None, delete).split(b" ")))


def _url(url: str) -> str:
    """A URL without the punctuation of the sentence around it: a trailing ``)`` closes a
    parenthesis only when the URL opened one (``(see https://x.org/a)``, but
    ``https://en.wikipedia.org/wiki/Go_(game)``); one too long to list, without its query."""
    url = url.rstrip(_URL_END)
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1].rstrip(_URL_END)
    if len(url) > MAX_ITEM_CHARS:
        # Too long to list, mostly for its query (tracking parameters): the page's address is
        # the identifier, and it holds the path a URL's text also gives (docs/survival.md).
        url = url.split("?", 1)[0]
    return url


def _is_path(path: str) -> bool:
    last = path.rsplit("/", 1)[-1]
    return (path[0] in "/.~" or path.count("/") >= 2 or "." in last) and not path.replace(
        "/", ""
    ).replace(".", "").isdigit()
