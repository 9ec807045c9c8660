"""Tier classification and security flags (seed 001), each decision explained in the task's log."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pm_agent.plan.models import SecurityFlags, Task, Tier
from pm_agent.plan.tier_rules import LOW_PATHS, LOW_RULES, PATH_RULES, TEXT_RULES, Rule, path_words
from pm_agent.regex_words import required_words, words_pattern


@dataclass(frozen=True)
class Signal:
    """One rule hit: which rule, what matched, and where."""

    rule: Rule
    match: str
    where: str  # "title", "ownership", "description", "acceptance criteria", "path src/x.py"

    def describe(self) -> str:
        if self.where.startswith("path ") and self.match == self.where[5:]:
            return f"{self.rule.area} file {self.match}"
        return f"keyword {self.match!r} in {self.where}"


def _sources(task: Task, paths: Sequence[str]) -> Iterator[tuple[str, str]]:
    """The texts the rules read, and where each is; `paths` are the task's expected paths (all_paths)."""
    yield "title", task.title
    yield "ownership", task.ownership
    for path in paths:
        yield f"path {path}", path_words(path)
    yield "description", task.description
    for criterion in task.acceptance_criteria:
        yield "acceptance criteria", criterion


def _alternatives(body: str) -> list[str]:
    """A regex's top-level alternatives (`a|b(c|d)` -> `a`, `b(c|d)`)."""
    found: list[str] = []
    depth, start, index = 0, 0, 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 2
            continue
        depth += 1 if char in "([" else -1 if char in ")]" else 0
        if char == "|" and depth == 0:
            found.append(body[start:index])
            start = index + 1
        index += 1
    return [*found, body[start:]]


def _literal_prefix(alternative: str) -> str:
    """The lowercase text every match of the alternative starts with (`auth[nz]?` -> `auth`; may be "")."""
    text = re.sub(r"^(?:\(\?<![^)]*\))+", "", alternative)  # leading lookbehinds match no text
    prefix: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and not text[index + 1].isalnum():
            prefix.append(text[index + 1])
            index += 2
            continue
        if char in "[](){}?*+|.^$\\":
            if char in "?*{" and prefix:
                prefix.pop()  # the last character is optional
            break
        prefix.append(char)
        index += 1
    return "".join(prefix).lower()


def _prefixes(rule: Rule) -> set[str] | None:
    """The text each alternative's hits start with (lowercase), or None when the pattern is not words_pattern's."""
    head, tail = "(?<![A-Za-z0-9])(?:", ")(?![A-Za-z0-9])"
    source = rule.pattern.pattern
    if not (source.startswith(head) and source.endswith(tail)) or not rule.pattern.flags & re.IGNORECASE:
        return None
    return {_literal_prefix(a) for a in _alternatives(source[len(head) : -len(tail)])}


def _needles(rule: Rule) -> tuple[str, ...] | None:
    """Words one of which every hit of the rule holds (lowercase), or None when its pattern is not words_pattern's."""
    found = _prefixes(rule)
    if found is None or "" in found:
        return None
    # A word holding another needle adds nothing: `authenticat` is found through `auth`.
    return tuple(sorted(n for n in found if not any(m != n and m in n for m in found)))


def _keys(prefixes: set[str] | None) -> frozenset[str] | None:
    """The first three letters or digits of each needle's first word, or None when that cannot rule it out.

    A hit starts where no letter or digit precedes it (the patterns' lookbehind), so the text's word
    it starts begins with the needle's first word: a text none of whose words begins with one of these
    keys cannot hit the rule. A needle of under three such characters with nothing after them (its word
    may go on) has no key.
    """
    if prefixes is None:
        return None
    keys: set[str] = set()
    for needle in prefixes:
        head = _HEAD.match(needle)
        word = head.group(1) if head is not None else ""
        if len(word) < 3 and (not word or head is None or head.end() == len(needle)):
            return None
        keys.add(word[:3])
    return frozenset(keys)


_HEAD = re.compile(r"[^a-z0-9]*([a-z0-9]*)")
# The first three characters of each word: a match takes the whole word, so the next one starts a word
# without a lookbehind tried at every position.
_WORD_STARTS = re.compile(r"([a-z0-9]{1,3})[a-z0-9]*")
# Each words rule with its needles: texts that hold none of a rule's needles cannot hit it, so one
# quick look over a task's texts rules out most patterns (ASCII only: Unicode case folding matches
# more than lower() shows). The keys, looked up once for all rules, rule out most before that.
# Keyed by the pattern's id: hashing a compiled pattern hashes its source, a microsecond each time;
# these patterns live as long as the module, so their ids stay theirs.
_NEEDLES = {id(rule.pattern): _needles(rule) for rule in (*TEXT_RULES, *LOW_RULES)}
_KEYS = {id(rule.pattern): _keys(_prefixes(rule)) for rule in (*TEXT_RULES, *LOW_RULES)}
# Rules written only in Chinese (`risk_words.cjk_pattern`: no Latin letter or digit in the pattern) cannot hit
# ASCII text, which is most plans' text: skip them there without running them.
_NON_ASCII_ONLY = frozenset(
    id(rule.pattern)
    for rule in (*TEXT_RULES, *LOW_RULES)
    if not any(c.isascii() and c.isalnum() for c in rule.pattern.pattern)
)
_ALL_KEYS = frozenset(key for keys in _KEYS.values() if keys is not None for key in keys)
_BY_KEY = {key: frozenset(p for p, keys in _KEYS.items() if keys is not None and key in keys) for key in _ALL_KEYS}


def candidate_rules(texts: Sequence[str], rules: Sequence[Rule] = TEXT_RULES) -> list[Rule]:
    """The rules (CRITICAL text rules by default) that may hit one of the texts; one left out hits none."""
    joined = "\n".join(texts)
    if not joined.isascii():
        return list(rules)
    lowered = joined.lower()
    found = _ALL_KEYS.intersection(_WORD_STARTS.findall(lowered))
    if rules is TEXT_RULES or rules is LOW_RULES:  # the module's own: their keyed choice is kept per key set
        memo = _CONSIDERED.setdefault(id(rules), {})
        considered = memo.get(frozenset(found))
        if considered is None:
            if len(memo) >= _CONSIDERED_MAX:
                memo.clear()
            considered = memo[frozenset(found)] = _considered(rules, found)
    else:
        considered = _considered(rules, found)
    return [rule for rule, needles in considered if needles is None or any(n in lowered for n in needles)]


def _considered(rules: Sequence[Rule], found: AbstractSet[str]) -> list[tuple[Rule, tuple[str, ...] | None]]:
    """The rules that words starting with one of the `found` keys may hit (or that have no keys), with their needles."""
    keyed: set[int] = set()
    for key in found:
        keyed.update(_BY_KEY[key])
    kept: list[tuple[Rule, tuple[str, ...] | None]] = []
    for rule in rules:
        pattern = id(rule.pattern)
        if pattern in _NON_ASCII_ONLY or (pattern not in keyed and _KEYS.get(pattern) is not None):
            continue
        kept.append((rule, _NEEDLES.get(pattern)))
    return kept


# TEXT_RULES' and LOW_RULES' `_considered` for each set of keys met: few sets recur over a plan's tasks.
_CONSIDERED: dict[int, dict[frozenset[str], list[tuple[Rule, tuple[str, ...] | None]]]] = {}
_CONSIDERED_MAX = 4096


def critical_signals(task: Task) -> list[Signal]:
    """Every CRITICAL rule hit, in the order title, ownership, paths, description, criteria."""
    found: list[Signal] = []
    paths = task.expected_files.all_paths()  # once: the sources and the path rules read them
    sources = list(_sources(task, paths))
    rules = candidate_rules([text for _, text in sources])
    for where, text in sources:
        for rule in rules:
            match = rule.pattern.search(text)
            if match:
                found.append(Signal(rule, match.group(0).lower(), where))
    for path in paths:
        found.extend(_path_signals(path))
    return found


def _twin(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """The pattern without IGNORECASE, for lowercased ASCII text, when its source is all lowercase."""
    if not pattern.flags & re.IGNORECASE or pattern.pattern != pattern.pattern.lower():
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


# Path patterns ignore case, which makes the regex engine try every position the slow way; on an
# ASCII path, the same pattern with case kept finds the same on the lowercased path, in half the time.
_TWINS = {id(rule.pattern): _twin(rule.pattern) for rule in (*PATH_RULES, *LOW_PATHS)}


def _required(twin: re.Pattern[str] | None) -> set[str] | None:
    """The words (lowercase) one of which every hit of the twin holds (regex_words.py), or None."""
    words = required_words(twin.pattern, twin.flags) if twin is not None else None
    return {word.lower() for word in words} if words else None


# The twins try every position of the path, a few microseconds each; a search for their literal
# words, a fraction of that, rules out most paths first (a path without any of them cannot hit).
_PATH_WORDS = {key: _required(twin) for key, twin in _TWINS.items()}
_PATH_FILTERS = {key: re.compile(words_pattern(words)) if words else None for key, words in _PATH_WORDS.items()}


def _union(rules: Sequence[Rule]) -> re.Pattern[str] | None:
    """One search for every rule's words: an ASCII path it misses hits none of the rules; None when a
    rule has no words filter (then each rule is tried). One trie of all the words, not an alternation of
    the rules' tries, which the engine would try one by one at every position of the path."""
    found = [_PATH_WORDS.get(id(rule.pattern)) for rule in rules]
    if not found or any(words is None for words in found):
        return None
    return re.compile(words_pattern(set().union(*(words for words in found if words is not None))))


# Most paths hit no CRITICAL path rule: one search rules all of them out, not one per rule.
_PATH_RULES_FILTER = _union(PATH_RULES)


def _path_signals(path: str) -> list[Signal]:
    """The CRITICAL path rules' hits on one expected path, in rule order."""
    lowered = path.lower() if path.isascii() else None
    if lowered is not None and _PATH_RULES_FILTER is not None and _PATH_RULES_FILTER.search(lowered) is None:
        return []
    return [Signal(rule, path, f"path {path}") for rule in PATH_RULES if _path_hit(rule, path, lowered)]


def _path_hit(rule: Rule, path: str, lowered: str | None) -> bool:
    """Whether a path rule hits the path (`lowered`: the path lowercased, when it is ASCII)."""
    twin = _TWINS.get(id(rule.pattern)) if lowered is not None else None
    if twin is not None and lowered is not None:
        words = _PATH_FILTERS.get(id(rule.pattern))
        if words is not None and words.search(lowered) is None:
            return False
        return twin.search(lowered) is not None
    return rule.pattern.search(path) is not None


def low_signal(task: Task) -> Signal | None:
    """A LOW hit: a low-risk keyword in the title or ownership, or every expected file docs/config."""
    rules = candidate_rules([task.title, task.ownership], LOW_RULES)  # none of the others hits either text
    for where, text in (("title", task.title), ("ownership", task.ownership)):
        for rule in rules:
            match = rule.pattern.search(text)
            if match:
                return Signal(rule, match.group(0).lower(), where)
    paths = task.expected_files.all_paths()
    kinds: set[str] = set()
    for path in paths:
        kind = _low_path_area(path)
        if kind is None:
            return None  # one file neither docs nor config: the rest need not be looked at
        kinds.add(kind)
    if paths:
        area = " and ".join(sorted(k for k in kinds if k))
        rule = Rule(Tier.LOW, area, LOW_PATHS[0].pattern)
        return Signal(rule, ", ".join(paths), "every expected file")
    return None


_LOW_PATHS_FILTER = _union(LOW_PATHS)


def _low_path_area(path: str) -> str | None:
    lowered = path.lower() if path.isascii() else None
    if lowered is not None and _LOW_PATHS_FILTER is not None and _LOW_PATHS_FILTER.search(lowered) is None:
        return None  # none of the LOW path rules' words: none of them hits
    return next((rule.area for rule in LOW_PATHS if _path_hit(rule, path, lowered)), None)


def infer_security_flags(task: Task) -> tuple[SecurityFlags, list[str]]:
    """Flags set by the contract or inferred from keywords and paths, with one reason per flag."""
    return _flags(task, critical_signals(task))


def _flags(task: Task, signals: list[Signal]) -> tuple[SecurityFlags, list[str]]:
    # Copied only when a signal sets a flag: most tasks keep their flags as they are (a copy shares
    # them too, as every model_copy of the task does).
    flags, copied = task.security_flags, False
    reasons: list[str] = (
        [f"security flag {name}: set in the task contract" for name, value in flags.model_dump().items() if value]
        if flags.any()
        else []
    )
    for signal in signals:
        name = signal.rule.flag
        if name is not None and not getattr(flags, name):
            if not copied:
                flags, copied = flags.model_copy(), True
            setattr(flags, name, True)
            reasons.append(f"security flag {name}: {signal.describe()}")
    return flags, reasons


def classify_tier(task: Task) -> Task:
    """A copy of the task with tier, tier_reason and security_flags set and the reasons logged.

    Any security flag forces CRITICAL, even over an explicit tier; otherwise an explicit tier stands;
    otherwise a CRITICAL keyword or path, then a LOW one, else NORMAL.
    """
    update, log = tier_update(task)
    return task.model_copy(update={**update, "decision_log": [*task.decision_log, *log]})


def tier_update(task: Task) -> tuple[dict[str, object], list[str]]:
    """What `classify_tier` changes (tier, tier_reason, security_flags) and the lines it adds to the log."""
    critical = critical_signals(task)  # once: the flags and the decision read the same hits
    flags, log = _flags(task, critical)
    tier, reason = _decide(task, flags, log, critical)
    log.append(f"tier {tier.value.upper()}: {reason}")
    return {"tier": tier, "tier_reason": f"{tier.value.upper()}: {reason}", "security_flags": flags}, log


def _decide(task: Task, flags: SecurityFlags, log: list[str], critical: list[Signal]) -> tuple[Tier, str]:
    flagged = [s for s in critical if s.rule.flag and getattr(flags, s.rule.flag)]
    if flags.any():
        first = flagged[0].describe() if flagged else "security flag set in the task contract"
        names = ", ".join(name for name, value in flags.model_dump().items() if value)
        reason = f"security flag {names} ({first})"
        if task.explicit_tier is not None and task.explicit_tier is not Tier.CRITICAL:
            reason += f" overrides the explicit tier {task.explicit_tier.value}"
        return Tier.CRITICAL, reason
    if task.io_contract.breaking_change and task.explicit_tier is None:
        return Tier.CRITICAL, "public API: io_contract declares a breaking change"
    if task.explicit_tier is not None:
        if critical and task.explicit_tier is not Tier.CRITICAL:
            log.append(
                f"explicit tier {task.explicit_tier.value} kept although {critical[0].describe()} suggests CRITICAL"
            )
        return task.explicit_tier, "explicit tier in the plan"
    if critical:
        return Tier.CRITICAL, f"{critical[0].describe()} ({critical[0].rule.area})"
    low = low_signal(task)
    if low is not None:
        if low.where == "every expected file":
            return Tier.LOW, f"every expected file is {low.rule.area} ({low.match})"
        return Tier.LOW, f"{low.describe()} ({low.rule.area})"
    return Tier.NORMAL, "no critical or low-risk signal (feature work)"
