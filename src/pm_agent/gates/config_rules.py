"""Which configuration changes weaken a check: the rules, as data, and the comparison of two versions.

A rule names a setting (each key component an fnmatch pattern; `_` and `-` are the same) and how a
change to it weakens: `added` (new entries in an ignore/exclude list), `removed` (entries dropped from a
select/enable list), `true` (`ignore_errors = true`), `false` (`strict = false`, or a strict flag
removed), `off` (an eslint rule turned "off", a pyright report set to "none", a cargo lint "allow"),
`value` (mypy `follow_imports = skip`), `lowered` (pyright `typeCheckingMode` below its old level),
`new` (any new entry, e.g. golangci `exclude-rules`), `changed` (pytest's `python_files`), and the test
runner's `addopts` (new `-k`, `-m`, `--deselect`, `--ignore`), `narrowed` (`testpaths`) and
`filterwarnings` (new `ignore` filters, dropped `error` ones).
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from pm_agent.gates.configs import ESLINT_FLAT, Key, Settings, read_settings
from pm_agent.gates.justify import Weakening

LINT = "lint/type check"
RUNNER = "test runner"

Kind = Literal[
    "added", "removed", "true", "false", "off", "value", "lowered", "new", "changed", "addopts", "narrowed", "warnings"
]


@dataclass(frozen=True)
class Rule:
    """A setting (key patterns) and the kind of change to it that weakens its tool."""

    pattern: Key
    kind: Kind
    check: str = LINT
    split: Literal["csv", "lines", "perfile"] = "csv"
    values: tuple[str, ...] = ()  # `value`: the weakening values; `lowered`: the levels, weakest first


def _rules(tool: str, names: str, kind: Kind, **options: Any) -> list[Rule]:
    """One rule per `|`-separated name (a name may hold `/` for deeper keys), also inside `overrides.*`."""
    rules = []
    for name in names.split("|"):
        parts = tuple(name.split("/"))
        rules.append(Rule((tool, *parts), kind, **options))
        if tool == "mypy":
            rules.append(Rule((tool, "overrides", "*", *parts), kind, **options))
    return rules


_MYPY_STRICT = "strict|disallow-*|check-untyped-defs|warn-*|strict-*|no-implicit-optional|extra-checks"
_TS_STRICT = (
    "compilerOptions/strict*|compilerOptions/noImplicit*|compilerOptions/noUnused*|compilerOptions/alwaysStrict"
    "|compilerOptions/noFallthroughCasesInSwitch|compilerOptions/noUncheckedIndexedAccess|compilerOptions/checkJs"
    "|compilerOptions/exactOptionalPropertyTypes|compilerOptions/noPropertyAccessFromIndexSignature"
)
RULES: tuple[Rule, ...] = (
    *_rules("ruff", "ignore|extend-ignore|exclude|extend-exclude", "added"),
    *_rules("ruff", "per-file-ignores/*|extend-per-file-ignores/*", "added"),
    *_rules("ruff", "select|extend-select", "removed"),
    *_rules("ruff", "format/exclude", "added"),  # the formatter's own excludes (the root's apply to it too)
    *_rules("black", "exclude|extend-exclude|force-exclude", "added"),
    *_rules("prettier", "ignore", "added"),
    *_rules("rustfmt", "ignore", "added"),
    *_rules("rustfmt", "disable-all-formatting", "true"),
    *_rules("flake8", "ignore|extend-ignore|exclude|extend-exclude", "added"),
    *_rules("flake8", "per-file-ignores|extend-per-file-ignores", "added", split="perfile"),
    *_rules("flake8", "per-file-ignores/*|extend-per-file-ignores/*", "added"),
    *_rules("flake8", "select|extend-select", "removed"),
    *_rules("mypy", "disable-error-code", "added"),
    *_rules("mypy", "exclude", "added", split="lines"),
    *_rules("mypy", "ignore-errors|ignore-missing-imports|allow-*|implicit-optional", "true"),
    *_rules("mypy", _MYPY_STRICT, "false"),
    *_rules("mypy", "follow-imports", "value", values=("skip", "silent")),
    *_rules("mypy", "enable-error-code", "removed"),
    *_rules("pylint", "disable|ignore|ignore-paths|ignore-patterns", "added"),
    *_rules("pylint", "enable", "removed"),
    *_rules("pyright", "ignore|exclude", "added"),
    *_rules("pyright", "typeCheckingMode", "lowered", values=("off", "basic", "standard", "strict")),
    *_rules("pyright", "report*", "off"),
    *_rules("pyright", "strict", "removed"),
    *_rules("tsconfig", "compilerOptions/skipLibCheck|compilerOptions/skipDefaultLibCheck", "true"),
    *_rules("tsconfig", _TS_STRICT, "false"),
    *_rules("tsconfig", "exclude", "added"),
    *_rules("eslint", "rules/*|overrides/*/rules/*", "off"),
    *_rules("eslint", "ignorePatterns|overrides/*/excludedFiles", "added"),
    *_rules("golangci", "linters/disable|run/skip-dirs|run/skip-files", "added"),
    *_rules("golangci", "issues/exclude|issues/exclude-dirs|issues/exclude-files", "added"),
    *_rules("golangci", "issues/exclude-rules/*/*|linters/exclusions/rules/*/*", "new"),
    *_rules("golangci", "linters/enable", "removed"),
    *_rules("golangci", "linters/disable-all", "true"),
    *_rules("cargo", "lints/*/*|lints/*/*/level", "off"),
    *_rules("pytest", "addopts", "addopts", check=RUNNER),
    *_rules("pytest", "testpaths", "narrowed", check=RUNNER),
    *_rules("pytest", "norecursedirs", "added", check=RUNNER),
    *_rules("pytest", "python-files|python-classes|python-functions", "changed", check=RUNNER),
    *_rules("pytest", "filterwarnings", "warnings", check=RUNNER),
    *_rules("pytest", "xfail-strict", "false", check=RUNNER),
)

# addopts options that leave tests out of the run: the option, and whether it takes a value.
RUNNER_OPTIONS: dict[str, bool] = {
    "-k": True,
    "-m": True,
    "--deselect": True,
    "--ignore": True,
    "--ignore-glob": True,
    "--continue-on-collection-errors": False,
    "--collect-only": False,
    "--co": False,
    "--last-failed": False,
    "--lf": False,
}


def _norm(part: str) -> str:
    return part.replace("_", "-")


def rule_for(key: Key) -> Rule | None:
    """The first rule whose pattern matches `key`."""
    normed = tuple(_norm(k) for k in key)
    for rule in RULES:
        if len(rule.pattern) == len(key) and all(
            fnmatch.fnmatchcase(k, _norm(p)) for k, p in zip(normed, rule.pattern, strict=True)
        ):
            return rule
    return None


def _truthy(value: Any) -> bool:
    if isinstance(value, bool | int):
        return bool(value)
    return str(value).strip().lower() in {"true", "1", "yes", "on"}


def _falsy(value: Any) -> bool:
    if isinstance(value, bool | int):
        return not value
    return str(value).strip().lower() in {"false", "0", "no", "off"}


def _is_off(value: Any) -> bool:
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, Mapping):
        value = value.get("level")
    if isinstance(value, bool):
        return value is False
    if isinstance(value, int):
        return value == 0
    return str(value).strip().lower() in {"off", "none", "allow", "false", "0"}


def _items(value: Any, split: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in value]
    if not isinstance(value, str):
        return [str(value)]
    if split == "lines":
        return [line.strip() for line in value.splitlines() if line.strip()]
    if split == "perfile":
        # flake8 separates entries and codes alike by commas or blanks: a word before a colon starts an entry.
        items, glob = [], ""
        for m in re.finditer(r"([^\s,:]*)[ \t]*:|([^\s,:]+)", value):
            if m.group(2) is None:
                glob = m.group(1)  # a colon with no glob before it starts an entry whose codes count for nothing
            elif glob:
                items.append(f"{glob}: {m.group(2)}")
        return items
    return [v for v in re.split(r"[,\s]+", value) if v]


def addopts_items(value: Any) -> list[str]:
    """The options in `addopts` that leave tests out of the run, each with its value (`-k not slow`)."""
    if isinstance(value, list):  # a TOML list: each entry is one argument already
        tokens = [str(v) for v in value]
    else:
        try:
            tokens = shlex.split(str(value or ""))
        except ValueError:
            tokens = str(value).split()
    items: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, inline = token.partition("=")
        if name in RUNNER_OPTIONS:
            takes = RUNNER_OPTIONS[name]
            if takes and not eq and i + 1 < len(tokens):
                inline, i = tokens[i + 1], i + 1
            items.append(f"{name} {inline}".strip())
        elif token[:2] in ("-k", "-m") and len(token) > 2:
            items.append(f"{token[:2]} {token[2:]}")
        i += 1
    return items


def _describe(key: Key) -> str:
    return f"{key[0]} {'.'.join(key[1:])}"


def _change(rule: Rule, key: Key, old: Any, new: Any) -> list[tuple[str, tuple[str, ...]]]:
    """(description, codes) for each weakening this setting's change makes; empty when it makes none."""
    what = _describe(key)
    glob = (key[-1],) if "*" in rule.pattern[-1] and rule.kind == "added" else ()
    if rule.kind in ("added", "removed"):
        before, after = _items(old, rule.split), _items(new, rule.split)
        fresh, gone = [i for i in after if i not in before], [i for i in before if i not in after]
        changed = fresh if rule.kind == "added" else gone
        sign = "+=" if rule.kind == "added" else "-="
        return [(f"{what} {sign} {item}", (item, *glob)) for item in changed]
    if rule.kind == "addopts":
        before = addopts_items(old)
        return [(f"pytest addopts += {item}", (item,)) for item in addopts_items(new) if item not in before]
    if rule.kind == "narrowed":
        before, after = _items(old, "csv"), _items(new, "csv")
        dropped = [i for i in before if i not in after]
        if (old is None and new is not None) or dropped:
            return [(f"{what} narrowed to {', '.join(after) or '(nothing)'}", tuple(after or ["testpaths"]))]
        return []
    if rule.kind == "warnings":
        before, after = _items(old, "lines"), _items(new, "lines")
        ignored = [i for i in after if i not in before and i.startswith("ignore")]
        unerrored = [i for i in before if i not in after and i.startswith("error")]
        changes: list[tuple[str, tuple[str, ...]]] = [(f"{what} += {i}", (i,)) for i in ignored]
        return changes + [(f"{what} -= {i}", (i,)) for i in unerrored]
    return _scalar_change(rule, key, old, new)


def _scalar_change(rule: Rule, key: Key, old: Any, new: Any) -> list[tuple[str, tuple[str, ...]]]:
    what, codes = _describe(key), tuple(key[-1:])
    weakened = False
    if rule.kind == "true":
        weakened = new is not None and _truthy(new) and not (old is not None and _truthy(old))
    elif rule.kind == "false":
        weakened = (new is not None and _falsy(new) and not (old is not None and _falsy(old))) or (
            new is None and old is not None and _truthy(old)
        )
    elif rule.kind == "off":
        weakened = (new is not None and _is_off(new) and not (old is not None and _is_off(old))) or (
            new is None and old is not None and not _is_off(old)
        )
    elif rule.kind == "value":
        weakened = str(new).lower() in rule.values and str(old).lower() not in rule.values
    elif rule.kind == "lowered":
        levels = rule.values
        rank = {v: i for i, v in enumerate(levels)}
        weakened = rank.get(str(new), len(levels)) < rank.get(str(old) if old is not None else "standard", 0)
    elif rule.kind == "new":
        weakened = new is not None and old is None
    elif rule.kind == "changed":
        weakened = new != old
    shown = "(removed)" if new is None else json.dumps(new) if not isinstance(new, str) else new
    return [(f"{what} = {shown}", codes)] if weakened else []


def _locate(added: Sequence[tuple[int, str]], needles: Sequence[str]) -> tuple[int | None, str]:
    """The first added line holding one of `needles` (tried in order), else the first added line."""
    for needle in needles:
        for number, text in added:
            if needle and needle in text:
                return number, text.strip()
    return (added[0][0], added[0][1].strip()) if added else (None, "")


def compare_settings(
    path: str, old: Settings, new: Settings, added: Sequence[tuple[int, str]], check: str | None = None
) -> list[Weakening]:
    """The weakenings from `old` to `new` settings of one file (only rules of `check`, when given)."""
    found: list[Weakening] = []
    for key in sorted(set(old) | set(new)):
        rule = rule_for(key)
        if rule is None or (check is not None and rule.check != check):
            continue
        for what, codes in _change(rule, key, old.get(key), new.get(key)):
            item = codes[0] if codes else ""
            line, text = _locate(added, [item.split(": ")[-1], item, key[-1]])
            found.append(Weakening(rule.check, path, line, text or what, what, codes))
    return found


_FLAT_OFF = re.compile(r"""["']?(?P<rule>[@\w/-]+)["']?\s*:\s*(?:["']off["']|0)\s*[,}]?\s*$""")
_FLAT_IGNORES = re.compile(r"\bignores\s*:\s*\[(?P<globs>[^\]]*)")


def flat_eslint_weakenings(path: str, added: Sequence[tuple[int, str]]) -> list[Weakening]:
    """eslint.config.js cannot be parsed here: its added lines that turn a rule off or add ignores."""
    found = []
    for number, text in added:
        off = _FLAT_OFF.search(text)
        if off:
            found.append(Weakening(LINT, path, number, text.strip(), f"eslint rule {off['rule']} off", (off["rule"],)))
        ignores = _FLAT_IGNORES.search(text)
        if ignores:
            globs = tuple(g.strip(" '\"") for g in ignores["globs"].split(",") if g.strip(" '\""))
            found.append(Weakening(LINT, path, number, text.strip(), "eslint ignores", globs or ("ignores",)))
    return found


def file_weakenings(
    path: str, old_text: str | None, new_text: str | None, added: Sequence[tuple[int, str]], check: str
) -> list[Weakening]:
    """Weakenings of `check` ("lint/type check" or "test runner") in one configuration file's change.

    Raises ValueError when a version of the file cannot be read as its format."""
    if ESLINT_FLAT.match(PurePosixPath(path).name):
        return flat_eslint_weakenings(path, added) if check == LINT else []
    old, new = read_settings(path, old_text), read_settings(path, new_text)
    found = compare_settings(path, old, new, added, check)
    if new_text is None and any((r := rule_for(k)) is not None and r.check == check for k in old):
        found.append(Weakening(check, path, None, "(file deleted)", f"configuration file deleted ({check})", (path,)))
    return found


__all__ = [
    "LINT",
    "RULES",
    "RUNNER",
    "RUNNER_OPTIONS",
    "Rule",
    "addopts_items",
    "compare_settings",
    "file_weakenings",
    "flat_eslint_weakenings",
    "rule_for",
]
