"""Linter, type checker and test runner configuration, read into comparable settings.

Each known configuration file (pyproject.toml, setup.cfg, tox.ini, .flake8, mypy.ini, ruff.toml,
.pylintrc, pytest.ini, pyrightconfig.json, tsconfig*.json, .eslintrc*, package.json, .golangci.*,
Cargo.toml) is parsed with its own format's parser (TOML, INI, JSON with comments, YAML) into flat
settings keyed by tool: `("ruff", "ignore")`, `("ruff", "per-file-ignores", "tests/*")`,
`("mypy", "overrides", "pkg.*", "ignore_errors")`, `("eslint", "rules", "no-unused-vars")`,
`("tsconfig", "compilerOptions", "strict")`, `("pytest", "addopts")`. Rules (`config_rules.py`)
compare the base version's settings with the change's.
"""

from __future__ import annotations

import configparser
import fnmatch
import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

Key = tuple[str, ...]
Settings = dict[Key, Any]

# file name (or pattern) -> format
_FORMATS: tuple[tuple[str, str], ...] = (
    ("pyproject.toml", "pyproject"),
    ("ruff.toml", "ruff"),
    (".ruff.toml", "ruff"),
    ("setup.cfg", "ini"),
    ("tox.ini", "ini"),
    (".flake8", "ini"),
    ("mypy.ini", "ini"),
    (".mypy.ini", "ini"),
    ("pytest.ini", "ini"),
    (".pylintrc", "pylintrc"),
    ("pylintrc", "pylintrc"),
    ("pyrightconfig.json", "pyright"),
    ("tsconfig*.json", "tsconfig"),
    ("jsconfig.json", "tsconfig"),
    (".eslintrc", "eslint"),
    (".eslintrc.json", "eslint"),
    (".eslintrc.yml", "eslint"),
    (".eslintrc.yaml", "eslint"),
    (".eslintignore", "eslintignore"),
    (".prettierignore", "prettierignore"),
    ("rustfmt.toml", "rustfmt"),
    (".rustfmt.toml", "rustfmt"),
    ("package.json", "package"),
    (".golangci.yml", "golangci"),
    (".golangci.yaml", "golangci"),
    (".golangci.toml", "golangci-toml"),
    (".golangci.json", "golangci-json"),
    ("Cargo.toml", "cargo"),
)
# Flat JavaScript configs cannot be parsed here: their added lines are read one by one instead.
ESLINT_FLAT = re.compile(r"^eslint\.config\.[cm]?[jt]s$")
TOOL_FILES_PYTEST_ONLY = frozenset({"pytest.ini"})


# The names without a wildcard, looked up at once (the gates ask of every changed path, several times a task).
_NAMED = {pattern: kind for pattern, kind in reversed(_FORMATS) if not any(c in pattern for c in "*?[")}
_GLOBBED = tuple((pattern, kind) for pattern, kind in _FORMATS if pattern not in _NAMED)


def config_format(path: str) -> str | None:
    """The format of a known configuration file (by its name), None for any other file."""
    name = path.rsplit("/", 1)[-1]
    kind = _NAMED.get(name)
    if kind is None:
        kind = next((k for pattern, k in _GLOBBED if fnmatch.fnmatchcase(name, pattern)), None)
    return kind


def is_lint_config(path: str) -> bool:
    """A file that configures a linter or type checker (pytest.ini configures only the test runner)."""
    name = path.rsplit("/", 1)[-1]
    return (config_format(path) is not None and name not in TOOL_FILES_PYTEST_ONLY) or bool(ESLINT_FLAT.match(name))


def _strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (tsconfig, .eslintrc) made plain JSON; strings are kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        else:
            out.append(char)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _flatten(value: Any, prefix: Key) -> Iterator[tuple[Key, Any]]:
    """Nested mappings to flat keys; lists of mappings by index; lists of scalars stay lists."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _flatten(inner, (*prefix, str(key)))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for index, inner in enumerate(value):
            yield from _flatten(inner, (*prefix, str(index)))
    else:
        yield prefix, value


def _mypy_overrides(overrides: Any) -> dict[str, Any]:
    """pyproject's `[[tool.mypy.overrides]]` as {module pattern: settings}, like mypy.ini's `[mypy-pkg.*]`."""
    out: dict[str, Any] = {}
    for entry in overrides if isinstance(overrides, list) else []:
        if not isinstance(entry, Mapping):
            continue
        modules = entry.get("module", "*")
        for module in modules if isinstance(modules, list) else [modules]:
            out[str(module)] = {k: v for k, v in entry.items() if k != "module"}
    return out


def _pyproject(data: Mapping[str, Any]) -> dict[str, Any]:
    tool = data.get("tool", {}) if isinstance(data.get("tool"), Mapping) else {}
    trees: dict[str, Any] = {}
    if isinstance(tool.get("ruff"), Mapping):
        trees["ruff"] = _ruff(tool["ruff"])
    if isinstance(tool.get("mypy"), Mapping):
        mypy = dict(tool["mypy"])
        mypy["overrides"] = _mypy_overrides(mypy.get("overrides"))
        trees["mypy"] = mypy
    if isinstance(tool.get("pylint"), Mapping):
        trees["pylint"] = _collapse_sections(tool["pylint"])
    for name in ("pyright", "flake8", "black"):
        if isinstance(tool.get(name), Mapping):
            trees[name] = tool[name]
    pytest = tool.get("pytest")
    if isinstance(pytest, Mapping):
        ini = pytest.get("ini_options")
        trees["pytest"] = {**{k: v for k, v in pytest.items() if k != "ini_options"}, **(ini or {})}
    return trees


def _ruff(data: Mapping[str, Any]) -> dict[str, Any]:
    """ruff's `lint.` table merged into its root: `lint.ignore` and `ignore` are the same setting."""
    merged = {k: v for k, v in data.items() if k != "lint"}
    lint = data.get("lint")
    if isinstance(lint, Mapping):
        merged.update(lint)
    return merged


def _collapse_sections(data: Mapping[str, Any]) -> dict[str, Any]:
    """pylint's sections (`main`, `messages control`, ...) merged: option names are unique across them."""
    merged: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            merged.update(value)
        else:
            merged[key] = value
    return merged


def _ini(text: str, pylintrc: bool) -> dict[str, Any]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep option names' case
    parser.read_string(text)
    trees: dict[str, dict[str, Any]] = {}
    for section in parser.sections():
        values = dict(parser.items(section))
        lowered = section.lower()
        if lowered == "flake8":
            trees.setdefault("flake8", {}).update(values)
        elif lowered == "mypy":
            trees.setdefault("mypy", {}).update(values)
        elif lowered.startswith("mypy-"):
            trees.setdefault("mypy", {}).setdefault("overrides", {})[section[5:]] = values
        elif lowered in ("pytest", "tool:pytest"):
            trees.setdefault("pytest", {}).update(values)
        elif pylintrc or lowered.startswith("pylint"):
            trees.setdefault("pylint", {}).update(values)
    return trees


def _trees(kind: str, text: str) -> dict[str, Any]:
    """The tool trees of one file's text (raises ValueError, TOMLDecodeError, configparser.Error, YAMLError)."""
    if kind == "pyproject":
        return _pyproject(tomllib.loads(text))
    if kind == "ruff":
        return {"ruff": _ruff(tomllib.loads(text))}
    if kind in ("ini", "pylintrc"):
        return _ini(text, kind == "pylintrc")
    if kind in ("pyright", "tsconfig"):
        return {kind: json.loads(_strip_jsonc(text) or "{}")}
    if kind == "eslint":
        data = json.loads(_strip_jsonc(text) or "{}") if text.lstrip().startswith("{") else yaml.safe_load(text)
        return {"eslint": data or {}}
    if kind in ("eslintignore", "prettierignore"):
        patterns = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
        return (
            {"eslint": {"ignorePatterns": patterns}} if kind == "eslintignore" else {"prettier": {"ignore": patterns}}
        )
    if kind == "rustfmt":
        return {"rustfmt": tomllib.loads(text)}
    if kind == "package":
        data = json.loads(text or "{}")
        return {"eslint": data.get("eslintConfig") or {}} if isinstance(data, Mapping) else {}
    if kind.startswith("golangci"):
        loader = {"golangci-toml": tomllib.loads, "golangci-json": json.loads}.get(kind, yaml.safe_load)
        return {"golangci": loader(text) or {}}
    if kind == "cargo":
        data = tomllib.loads(text)
        workspace = data.get("workspace", {})
        lints = data.get("lints") or (workspace.get("lints") if isinstance(workspace, Mapping) else None)
        return {"cargo": {"lints": lints or {}}}
    return {}


def read_settings(path: str, text: str | None) -> Settings:
    """Flat settings of a configuration file's text (None: the file does not exist); ValueError if unreadable."""
    kind = config_format(path)
    if kind is None or text is None:
        return {}
    try:
        trees = _trees(kind, text)
    except (ValueError, configparser.Error, yaml.YAMLError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise ValueError(f"{path}: cannot read as {kind}: {exc}") from exc
    settings: Settings = {}
    for tool, tree in trees.items():
        settings.update(_flatten(tree, (tool,)))
    return settings


__all__ = ["ESLINT_FLAT", "Key", "Settings", "config_format", "is_lint_config", "read_settings"]
