"""Secrets out of what pm-agent stores and out of the environment of the commands it runs as gates.

Environment: `is_secret_env` names the variables a gate command must not see: API keys, tokens and
pm-agent's own variables, by name (`ANTHROPIC_*`, `OPENAI_*`, `AWS_*`, `PM_AGENT_*`, `*_TOKEN`,
`*_SECRET*`, `*_KEY`, `*PASSWORD*`, ...) and URLs that carry a password by value. PATH, HOME, LANG,
TERM, VIRTUAL_ENV, PYTHONPATH and the like stay.

Storage: `redact` replaces secrets in each string pm-agent stores (agent stream lines, signal payloads,
gate evidence, events) with `[REDACTED:<kind>]`:
- exact values: the values of credential variables in pm-agent's environment (`[REDACTED:$NAME]`)
  and the values the secrets gate found in a worktree (`remember_secret`);
- detect-secrets' own pattern plugins (AWS, GitHub, Slack, Stripe, private keys, JWTs, passwords in
  URLs, quoted `password = "..."` assignments, ...), line by line. Its two high-entropy plugins are
  left out here: in transcripts they match every commit sha, object id and signature. Their regexes
  are read from `_secret_patterns` (written out from the installed detect-secrets, see
  `secret_patterns_source`), so detect-secrets itself is imported only for the keyword plugin.
A JSON text (an agent's stream line) is redacted in its decoded strings, then encoded again only if
something changed, so the stored line stays valid JSON.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from pm_agent import environ as env_cache
from pm_agent.regex_words import required_words, words_pattern

__all__ = [
    "MIN_SECRET_CHARS",
    "is_secret_env",
    "is_secret_name",
    "known_secrets",
    "live_secret_patterns",
    "redact",
    "redact_text",
    "redact_value",
    "remember_secret",
    "secret_patterns_source",
]

MIN_SECRET_CHARS = 8  # shorter values ("1", "true", "dev") would blank out ordinary words
_MAX_REMEMBERED = 1000

_SECRET_PREFIXES = ("ANTHROPIC_", "OPENAI_", "AWS_", "AZURE_", "PM_AGENT_", "CLAUDE_CODE_")
_SECRET_PARTS = frozenset(
    {"AUTH", "COOKIE", "CREDS", "KEY", "KEYS", "PASS", "PASSWD", "PASSPHRASE", "PRIVATE", "TOKEN", "TOKENS"}
)
_SECRET_STARTS = ("SECRET", "PASSWORD", "CREDENTIAL", "APIKEY")
_SECRET_ENDS = ("APIKEY", "TOKEN", "SECRET", "PASSWORD")
# The plugin matches a private key's first line only; the key is the lines up to its END line.
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(-----END[A-Z ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL
)
_URL_WITH_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.IGNORECASE)


def _credential_name(name: str) -> bool:
    """Names that say they hold a credential: a part like KEY or AUTH, or TOKEN/SECRET/PASSWORD in one."""
    parts = [p for p in name.upper().split("_") if p]
    return any(p in _SECRET_PARTS or p.startswith(_SECRET_STARTS) or p.endswith(_SECRET_ENDS) for p in parts)


def is_secret_name(name: str) -> bool:
    """A variable a gate command must not see, by its name."""
    return name.upper().startswith(_SECRET_PREFIXES) or _credential_name(name)


def is_secret_env(name: str, value: str) -> bool:
    """A variable a gate command must not see: a secret name, or a URL with a password in its value."""
    return is_secret_name(name) or bool(_URL_WITH_PASSWORD.search(value))


# ---------------------------------------------------------------- known values

_remembered: dict[str, str] = {}
_remembered_lock = threading.Lock()


def remember_secret(value: str, kind: str) -> None:
    """A secret value found somewhere (the secrets gate): redacted wherever it shows up from now on."""
    value = value.strip()
    if len(value) < MIN_SECRET_CHARS:
        return
    with _remembered_lock:
        if len(_remembered) < _MAX_REMEMBERED:
            _remembered.setdefault(value, kind)


def _env_secrets(source: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in source.items():
        text = value.strip()
        # A path is where a secret lives, not the secret; replacing it would garble every mention of it.
        if len(text) >= MIN_SECRET_CHARS and not text.startswith("/") and _credential_name(name):
            found.setdefault(text, f"${name}")
    return found


def known_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """value → kind: credential variables of pm-agent's environment, then the remembered values."""
    # Computed once per state of the environment: this runs for every payload pm-agent stores.
    found = dict(_env_secrets(environ) if environ is not None else env_cache.derived(_env_secrets))
    with _remembered_lock:
        for value, kind in _remembered.items():
            found.setdefault(value, kind)
    return found


# ---------------------------------------------------------------- detect-secrets plugins

Finder = Callable[[str], Iterator[str]]
# (kind, regex, its flags, the keyword plugin's?, the words one of which is in every match, as a regex, or None)
PatternRow = tuple[str, str, int, bool, "str | None"]
PatternTable = tuple[tuple[PatternRow, ...], "str | None"]  # the rows, and the regex of every row's words

_MIN_WORD = 3  # a finder whose words are shorter is always tested: "AC" or ":" would let nearly all text through


def live_secret_patterns() -> PatternTable:
    """The pattern table, read from the installed detect-secrets (its import costs ~130 ms of CPU, with requests)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector

    rows: list[PatternRow] = []
    every: set[str] = set()
    plugin_classes: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
    for kind, cls in sorted(plugin_classes.items()):
        name = cls.__name__
        if "HighEntropy" in name or name == "IPPublicDetector":  # see the module docstring
            continue
        plugin = cls()
        if isinstance(plugin, keyword.KeywordDetector):
            regexes, is_keyword = [re.compile(keyword.DENYLIST_REGEX, re.IGNORECASE)], True
        elif isinstance(plugin, RegexBasedDetector):
            regexes, is_keyword = list(plugin.denylist), False
        else:
            continue
        for regex in regexes:
            needed = required_words(regex.pattern, regex.flags)
            words = None
            if needed is not None and min(map(len, needed)) >= _MIN_WORD:
                lowered = {word.lower() for word in needed}
                every |= lowered
                words = words_pattern(lowered)
            rows.append((kind, regex.pattern, regex.flags, is_keyword, words))
    return tuple(rows), (words_pattern(every) if every else None)


def secret_patterns_source() -> str:
    """The text of `pm_agent/_secret_patterns.py` for the installed detect-secrets."""
    from importlib.metadata import version

    rows, gate = live_secret_patterns()
    lines = [
        '"""detect-secrets\' pattern plugins as `pm_agent.redaction` reads them, written out: generated by',
        "`redaction.secret_patterns_source()` (a test compares). With it a process redacts without importing",
        'detect-secrets and requests (~130 ms of CPU, paid by every signal server) until a line holds a keyword."""',
        "# ruff: noqa: E501",
        "",
        "from __future__ import annotations",
        "",
        f"DETECT_SECRETS = {version('detect-secrets')!r}",
        f"GATE: str | None = {gate!r}",
        "ROWS: tuple[tuple[str, str, int, bool, str | None], ...] = (",
        *(f"    {row!r}," for row in rows),
        ")",
        "",
    ]
    return "\n".join(lines)


@functools.cache
def _table() -> PatternTable:
    """The written-out table when it was made from the installed detect-secrets, else read from it now."""
    from importlib.metadata import PackageNotFoundError, version

    from pm_agent import _secret_patterns as written

    try:
        installed = version("detect-secrets")
    except PackageNotFoundError:
        installed = None
    return (written.ROWS, written.GATE) if installed == written.DETECT_SECRETS else live_secret_patterns()


@functools.cache
def _finders() -> tuple[tuple[str, Finder, re.Pattern[str] | None], ...]:
    """(kind, find values in a line, quick test on the whole text) for each pattern plugin's regex."""
    return tuple(_finder(index) for index in range(len(_table()[0])))


@functools.cache
def _finder(index: int) -> tuple[str, Finder, re.Pattern[str] | None]:
    """`_finders()[index]`, its regex compiled on first use: the prefilter leaves most texts to the few ungated
    finders, and compiling all ~45 regexes cost each process (pm-agent, every signal server) ~10 ms at its first
    redaction."""
    kind, pattern, flags, is_keyword, _ = _table()[0][index]
    regex = re.compile(pattern, flags)
    return (kind, _keyword_finder(regex) if is_keyword else _regex_finder(regex), regex)


def _regex_finder(regex: re.Pattern[str]) -> Finder:
    # The whole match, not the plugin's first group: some plugins capture only the prefix (`ghp`).
    return lambda line: (m.group(0) for m in regex.finditer(line) if m.group(0))


@functools.cache
def _keyword_plugin() -> Any:
    from detect_secrets.plugins import keyword

    return keyword.KeywordDetector()


def _keyword_finder(denylist: re.Pattern[str]) -> Finder:
    def find(line: str) -> Iterator[str]:
        # Each of the plugin's regexes holds a keyword of `denylist`: a line without one has nothing to find
        # (and detect-secrets is imported only for a line with one).
        # The indirect-reference test is the costly part: it only runs on a line the plugin found values in.
        if not denylist.search(line):
            return
        from detect_secrets.filters import heuristic

        values = [
            value
            for value in _keyword_plugin().analyze_string(line)
            if len(value) >= 4
            and not heuristic.is_sequential_string(value)
            and not heuristic.is_potential_uuid(value)
            and not heuristic.is_templated_secret(value)
            and not heuristic.is_prefixed_with_dollar_sign(value)
        ]
        if values and not heuristic.is_indirect_reference(line):
            yield from values

    return find


# The same short strings come back all the time (states, reasons, paths, tool names): what the finders make
# of one is remembered. Bounded: emptied when full; long texts are never kept.
_MEMO_MAX_CHARS = 512
_MEMO_MAX_ITEMS = 8192
_memo: dict[str, str] = {}


def _plugin_redact(text: str) -> str:
    if len(text) > _MEMO_MAX_CHARS:
        return _plugin_scan(text)
    done = _memo.get(text)
    if done is None:
        done = _plugin_scan(text)
        if len(_memo) >= _MEMO_MAX_ITEMS:
            _memo.clear()
        _memo[text] = done
    return done


def _plugin_scan(text: str) -> str:
    active = [(kind, find) for kind, find, quick in _candidates(text) if quick is None or quick.search(text)]
    if not active:
        return text
    lines = text.split("\n")
    for index, line in enumerate(lines):
        for kind, find in active:
            for value in sorted(set(find(line)), key=len, reverse=True):
                line = line.replace(value, f"[REDACTED:{kind}]")
        lines[index] = line
    return "\n".join(lines)


# ---------------------------------------------------------------- prefilter
# Most stored strings hold no secret, yet testing every plugin's regex on each costs ~45 searches a string.
# For each regex the words one of which is in every match are read from its parse tree (regex_words.py); one
# regex of all those words (`_prefilter`) rules most plugins out at once. Only for ASCII text: there
# `lower()` agrees with re.IGNORECASE, which elsewhere also equates İ, ı, K (Kelvin) and ſ with ASCII letters.
# The words are read once, into the pattern table (`_secret_patterns`), with the plugins' regexes.

FinderEntry = tuple[str, Finder, "re.Pattern[str] | None"]


class _Prefilter(NamedTuple):
    gate: re.Pattern[str] | None  # every finder's words: no match rules out all but the ungated finders
    words: tuple[str | None, ...]  # each finder's own words (lower case), as in `_finders()`; compiled by `_words`
    ungated: tuple[FinderEntry, ...]  # the finders that have no words


@functools.cache
def _prefilter() -> _Prefilter:
    """The words of every finder that has some, and the finders that have none."""
    rows, gate = _table()
    words = tuple(row[4] for row in rows)
    ungated = tuple(_finder(index) for index, own in enumerate(words) if own is None)
    return _Prefilter(re.compile(gate) if gate else None, words, ungated)


@functools.cache
def _words(source: str) -> re.Pattern[str]:
    """A finder's words, compiled on first use: only a text the gate lets through is tested with them."""
    return re.compile(source)


def _candidates(text: str) -> tuple[FinderEntry, ...] | list[FinderEntry]:
    """The finders that may match `text`, in `_finders()` order: those whose words are in it, and the ungated."""
    table = _prefilter()
    if table.gate is None or not text.isascii():
        return _finders()
    lowered = text.lower()
    if not table.gate.search(lowered):
        return table.ungated
    return [_finder(i) for i, own in enumerate(table.words) if own is None or _words(own).search(lowered)]


# ---------------------------------------------------------------- redaction


def redact_text(text: str, known: Mapping[str, str] | None = None) -> str:
    """`text` with known secret values and what detect-secrets' pattern plugins find replaced."""
    if not text:
        return text
    # Whole key blocks first: a remembered value may be a key's header line, which would split the block.
    text = _PRIVATE_KEY_BLOCK.sub("[REDACTED:Private Key]", text)
    values = known_secrets() if known is None else known
    for value in sorted(values, key=len, reverse=True):
        if value in text:
            text = text.replace(value, f"[REDACTED:{values[value]}]")
    return _plugin_redact(text)


def redact_value(value: Any, known: Mapping[str, str] | None = None) -> Any:
    """A JSON-like value with every string in it redacted (mapping keys stay as they are)."""
    values = known_secrets() if known is None else known
    if isinstance(value, str):
        return redact_text(value, values)
    if isinstance(value, Mapping):
        return {k: redact_value(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, values) for v in value]
    return value


def redact(payload: Any) -> Any:
    """What pm-agent stores, redacted: a JSON text stays JSON (re-encoded only when something changed)."""
    known = known_secrets()
    if not isinstance(payload, str):
        return redact_value(payload, known)
    stripped = payload.strip()
    if stripped[:1] in ("{", "["):
        try:
            decoded = json.loads(stripped)
        except ValueError:
            return redact_text(payload, known)
        cleaned = redact_value(decoded, known)
        if cleaned == decoded:
            return payload
        return json.dumps(cleaned, ensure_ascii=False, separators=(",", ":"))
    return redact_text(payload, known)
