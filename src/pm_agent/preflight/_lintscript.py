"""What a project's own lint script checks: the paths `scripts/lint.sh` gives mypy (and `ruff format --check`).

Projects in the style of tiangolo's (fastapi, typer, sqlmodel, full-stack-fastapi-template's backend/) keep their
checks in `scripts/lint.sh`: `mypy app`, `ruff check app`. mypy with no target configured checks what it is told,
and `mypy .` over a folder is not what such a project checks: its tests/, alembic/ and scripts are outside its
typing (`strict = true` over them floods the baseline), and two folders holding a module of the same name without
`__init__.py` stop mypy before it checks anything ("Duplicate module named"). ruff is left as it is: over more
files than the script names it reports only more of the same findings, and its `exclude` settings apply.
"""

from __future__ import annotations

import shlex
from pathlib import Path

LINT_SCRIPTS = ("scripts/lint.sh",)
# What may run a tool in such a script: `uv run mypy app`, `python -m mypy app`.
_RUNNERS = (("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("python", "-m"), ("python3", "-m"))
_SHELL = frozenset("$`|&;<>(){}*?")


def script_targets(repo: Path, tool: str, *, check: str = "") -> tuple[str, str] | None:
    """(` app`, where) when the project's lint script runs `tool` (`mypy`, `ruff format`) on paths only, each an
    existing file or folder of the project (a flag, a variable, a glob, a path outside: not read, pm-agent adds nothing
    it cannot vouch for), the flag `check` (`--check`) aside: a formatter's line in a lint script checks; else None."""
    for name in LINT_SCRIPTS:
        path = repo / name
        try:
            lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
        except (OSError, UnicodeDecodeError):
            continue
        for number, line in enumerate(lines, start=1):
            targets = _targets(repo, line, tool.split(), check)
            if targets:
                return " " + shlex.join(targets), f"{name} line {number} (`{line.strip()}`)"
    return None


def _targets(repo: Path, line: str, tool: list[str], check: str) -> list[str] | None:
    """The paths of a `tool <paths>` line (with `check` among them, when given), or None for any other line."""
    if _SHELL.intersection(line.split("#", 1)[0]):
        return None
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    for runner in _RUNNERS:
        if tuple(words[:2]) == runner:
            words = words[2:]
            break
    if words[: len(tool)] != tool or (check and check not in words):
        return None
    paths = [w for w in words[len(tool) :] if not check or w != check]
    if not paths:
        return None
    for target in paths:
        if target.startswith("-") or Path(target).is_absolute() or ".." in Path(target).parts:
            return None
        if not (repo / target).exists():
            return None
    return paths


__all__ = ["LINT_SCRIPTS", "script_targets"]
