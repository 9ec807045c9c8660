"""The redaction prefilter rules detect-secrets plugins out by the words their regexes need, never one that matches."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

from pm_agent.redaction import _candidates, _finders, _memo, _plugin_redact, _plugin_scan, _prefilter, redact_text
from pm_agent.regex_words import _language, _required, words_pattern

_parser: Any = importlib.import_module("re._parser")

H = "0123456789abcdef"
A = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9"  # letters and digits, mixed case

# One text per plugin regex (and a few more): every finder must be matched by one of them (checked below).
SECRETS = [
    "AKIAIOSFODNN7EXAMPLE",
    f'aws_secret_key = "{(A * 2)[:40]}"',
    f" AKC{A[:12]} ",
    f" APB{A[:10]} ",
    f"AccountKey={(A * 4)[:88]}",
    "git clone https://bot:s3cr3tpass@git.example.com/x.git",
    f'cloudant_password = "{H * 4}"',
    f"cl_key: '{'abcdefghijklmnopqrstuvwx'}'",
    f"https://admin:{H * 4}@acct.cloudant.com",
    "https://admin:abcdefghijklmnopqrstuvwx@acct.cloudant.com",
    f"M{A[:23]}.{A[:6]}.{A[:27]}",
    "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
    f"glpat-{A[:20]} GR1348941{A[:20]} glcbt-{A[:20]} glimt-{A[:25]}",
    f"glptt-{(A * 2)[:40]} glagent-{(A * 2)[:50]} gloas-{(A * 3)[:64]}",
    f'secret_access_key = "{(H * 3)[:48]}"',
    f'ibm_cloud_iam_key = "{(A * 2)[:44]}"',
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    f"{(H * 2)[:32]}-us12",
    "//registry.npmjs.org/:_authToken=npm_abcdef",
    f"sk-{A[:20]}T3BlbkFJ{A[:20]}",
    "-----BEGIN DSA PRIVATE KEY----- -----BEGIN EC PRIVATE KEY----- -----BEGIN OPENSSH PRIVATE KEY-----",
    "-----BEGIN PGP PRIVATE KEY BLOCK----- -----BEGIN PRIVATE KEY----- -----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN SSH2 ENCRYPTED PRIVATE KEY----- PuTTY-User-Key-File-2: ssh-rsa",
    f"pypi-AgEIcHlwaS5vcmc{(A * 3)[:70]} pypi-AgENdGVzdC5weXBpLm9yZw{(A * 3)[:70]}",
    'db_password = "correct-horse-battery"',
    f"SG.{A[:22]}.{(A * 2)[:43]}",
    "xoxb-1234-5678-abcdef",
    "https://hooks.slack.com/services/T0001/B0002/XXXXYYYY",
    f'softlayer_api_key = "{(H * 4)}"',
    f"https://api.softlayer.com/soap/v3/{H * 4}",
    f"sq0csp-{(A * 2)[:43]}",
    f"sk_live_{A[:24]} rk_live_{A[:24]}",
    f"123456789:{(A * 2)[:35]}",
    f"AC{(H * 2)[:32]} SK{(H * 2)[:32]}",
]
TEXTS = [*SECRETS, *(s.upper() for s in SECRETS), *(s.lower() for s in SECRETS), *(f"log: {s} (end)" for s in SECRETS)]


@pytest.fixture(autouse=True)
def _fresh_finders() -> None:
    """Build the finders and the prefilter in each test: the builders are what these tests check."""
    _finders.cache_clear()
    _prefilter.cache_clear()
    _memo.clear()


def words(pattern: str, flags: int = 0) -> set[str] | None:
    return _required(_parser.parse(pattern, flags))


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("ghp_[A-Za-z0-9]{36}", {"ghp_"}),
        ("(?:A|B)x{2}yz", {"Axxyz", "Bxxyz"}),
        ("ab?c", {"abc", "ac"}),
        (r"(?<=\W)key\s*=", {"key"}),
        (r"(?:foo|barbaz)\d+(?:quux|xyzzy)", {"quux", "xyzzy"}),
        (r"(?:foo|barbaz)\d+(?:q|xy)", {"foo", "barbaz"}),
        ("[^a]bc", {"bc"}),
        (r"[\"']secret[\"']", {'"secret"', "'secret'", "\"secret'", "'secret\""}),
        ("x+", {"x"}),
        ("(ghp|gho)_x", {"ghp_x", "gho_x"}),
        ("(?:ab|cd)ef", {"abef", "cdef"}),
        (r"(\d+abc\d+)x", {"abc"}),
        ("x{3}yz", {"yz"}),
        ("x{2}y", {"xxy"}),
        ("(?:ab)+c", {"ab"}),
        (r"(?:abc|def\d)", {"abc", "def"}),
        (r"\d+:\d+", {":"}),
        (r"(?:abc|\d)", None),
        ("x*", None),
        ("(?i:abc)", None),
        (r"\w+", None),
    ],
)
def test_the_words_one_of_which_every_match_holds(pattern: str, expected: set[str] | None) -> None:
    assert words(pattern) == expected
    if expected is not None:
        needed = re.compile("|".join(map(re.escape, expected)))
        for text in ("ghp_" + "a" * 36, "Axxyz", "ac", " key =", "foo1quux", "barbaz2xy", "xbc", '"secret"', "xx"):
            assert not re.search(pattern, text) or needed.search(text), (pattern, text)


def test_a_long_sequence_is_cut_into_runs_that_each_stay_in_every_match() -> None:
    found = words("[ab][ab][ab][ab][ab][ab][ab][ab]xyz")
    assert found is not None
    assert all(word.endswith("xyz") for word in found)
    assert 0 < len(found) <= 128
    assert min(map(len, found)) >= 6


def test_a_run_cut_at_its_start_is_first_considered_whole() -> None:
    found = words("abcdefgh" + "[ab]" * 8)
    assert found is not None
    assert len(found) == 128
    assert all(word.startswith("abcdefgh") and len(word) == 15 for word in found)


def test_only_a_run_start_is_dropped_so_each_word_stays_a_part_of_the_match() -> None:
    pattern = "q" + "[ab]" * 7 + "[cd]rstu"
    text = "qabababacrstu"
    assert re.fullmatch(pattern, text)
    found = words(pattern)
    assert found is not None
    assert any(word in text for word in found)
    assert min(map(len, found)) == 11


def test_a_sequence_of_128_words_is_a_language_and_one_of_256_is_not() -> None:
    assert len(_language(_parser.parse("[ab]" * 7 + "c")) or ()) == 128
    assert _language(_parser.parse("[ab]" * 8)) is None


def test_the_trie_pattern_finds_exactly_where_a_word_is() -> None:
    pattern = re.compile(words_pattern({"key", "keyword", "pass", "pwd", "a.b"}))
    assert pattern.pattern == r"(?:a\.b|key|p(?:ass|wd))"
    assert [bool(pattern.search(t)) for t in ("my key", "passed", "pw d", "axb", "a.b", "KEY")] == [
        True,
        True,
        False,
        False,
        True,
        False,
    ]


def test_every_finder_that_matches_a_text_is_among_its_candidates() -> None:
    matched: set[int] = set()
    for text in TEXTS:
        candidates = [id(entry) for entry in _candidates(text)]
        for index, (kind, _, quick) in enumerate(_finders()):
            if quick is not None and quick.search(text):
                matched.add(index)
                assert id(_finders()[index]) in candidates, (kind, quick.pattern, text)
    assert matched == set(range(len(_finders()))), "each finder is matched by some text above"


def test_ordinary_text_is_tested_by_the_few_ungated_finders_only() -> None:
    table = _prefilter()
    assert 0 < len(table.ungated) < len(_finders()) // 4
    for text in ("3 failed in 0.01s", "commit 7408996a1b2c: fix the parser", '{"gate": "tests-run", "n": 3}'):
        assert _candidates(text) == table.ungated
    assert len(_candidates("the PASSWORD is set")) > len(table.ungated)
    assert len(_candidates("the password is set")) < len(_finders())


def test_non_ascii_text_is_tested_by_every_finder() -> None:
    # re.IGNORECASE equates the Kelvin sign with k and long s with s; lower() does not.
    for text in ('api_\u212aey = "hunter2hunter2"', 'db_pa\u017fsword = "hunter2hunter2"'):
        assert _candidates(text) is _finders()
        assert redact_text(text).endswith('= "[REDACTED:Secret Keyword]"')


def test_the_keyword_plugin_looks_only_at_lines_with_a_keyword_and_skips_indirect_references() -> None:
    text = 'user = "hunter2hunter2"\npassword = "hunter2hunter2x"\nx == conf["a"]; secret = "hunter3hunter3"'
    assert redact_text(text) == (
        'user = "hunter2hunter2"\npassword = "[REDACTED:Secret Keyword]"\nx == conf["a"]; secret = "hunter3hunter3"'
    )
    assert redact_text('API_KEY: "abcd1234efgh"') == 'API_KEY: "[REDACTED:Secret Keyword]"'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('password = "hq7z"', 'password = "[REDACTED:Secret Keyword]"'),  # four characters are enough
        ('password = "6fa459ea-ee8a-3ca4-894e-db77e160355e"', None),  # a uuid
        ('password = "abcdefgh"', None),  # a sequence
        ('password = "$hunter2hunter2"', None),  # a variable
        ('password = "{{ hunter2hunter2 }}"', None),  # a template
        (
            "AKIAIOSFODNN7EXAMPLE and ghp_0123456789abcdefghijklmnopqrstuvwxyz",
            "[REDACTED:AWS Access Key] and [REDACTED:GitHub Token]",
        ),
        ("xoxb-1-abc xoxb-1-abcdef", "[REDACTED:Slack Token] [REDACTED:Slack Token]"),  # the longer one first
    ],
)
def test_what_freshly_built_finders_redact_and_leave(text: str, expected: str | None) -> None:
    assert redact_text(text) == (text if expected is None else expected)


def test_remembered_answers_are_the_scans_answers_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A string seen before gets what a fresh scan gives; the memo keeps short texts only, and no more than its cap."""
    from pm_agent import redaction

    for text in TEXTS:
        scanned = _plugin_scan(text)
        assert _plugin_redact(text) == scanned  # first time: scanned and remembered
        assert _plugin_redact(text) == scanned  # then from the memo
        assert _memo[text] == scanned
    assert any("[REDACTED:" in v for v in _memo.values())
    long_text = "x" * (redaction._MEMO_MAX_CHARS + 1) + SECRETS[0]
    assert "[REDACTED:" in redact_text(long_text)
    assert long_text not in _memo
    monkeypatch.setattr(redaction, "_MEMO_MAX_ITEMS", 3)
    _memo.clear()
    for i in range(10):
        redact_text(f"plain text {i}")
        assert len(_memo) <= 3
