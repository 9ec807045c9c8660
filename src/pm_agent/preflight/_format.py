"""Python's format check: ruff's formatter or black, run as a check that rewrites nothing (`--check`).

A gate must not rewrite the files it checks (pm-agent would take the formatter's edits for the task's change), and
the project's CI fails an agent's unformatted code all the same: `ruff format --check`, `black --check`.

Only a formatter the project shows it uses counts: a `ruff-format` pre-commit hook, [tool.ruff.format] in
pyproject.toml, [format] in ruff.toml, `ruff format --check` in its lint script; a `black` hook or [tool.black].
[tool.ruff] alone is lint settings (many projects lint with ruff and format with black), and a project that shows
no formatter gets no format check and no rejection line either (most have none: `init` prints every rejected line).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import Any

from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot
from pm_agent.preflight._hatch import Tool
from pm_agent.preflight._lintscript import script_targets
from pm_agent.preflight._precommit import Hook, drift
from pm_agent.preflight._probe import Probe

FORMAT_HOOKS = ("ruff-format", "black")
"""The pre-commit hooks that make a repository a Python project formatted by ruff or black."""
_CHECK = "--check"  # both formatters' flag: report the files it would change, exit 1, write nothing
_NOT_MARKDOWN = "--extend-exclude '*.md'"


def python_format(
    probe: Probe,
    read: tuple[dict[str, Any], Mapping[str, Hook], Mapping[str, str]],
    tool: Tool,
    problem: str | None,
    found: Finding,
) -> None:
    """The format check of the project's formatter, ruff's over black's when it shows both (black's then rejected);
    `read` is what _python.py has read: pyproject.toml, the pre-commit hooks and the versions they pin."""
    pyproject, hooks, pins = read
    ruff = _ruff(probe, pyproject, hooks.get("ruff-format"))
    formatters = [("ruff", ruff), ("black", _black(probe, pyproject, hooks))]
    chosen: str | None = None
    for name, evidence in formatters:
        if evidence is None:
            continue
        args, where = evidence
        command, how, missing = tool(name, name, args)
        if chosen is not None:
            why = f"{where}, but {chosen}: the project formats with ruff, and two formatters disagree on some code"
            found.rejected.append(Rejected(command, why, Slot.FORMAT))
            continue
        if missing is None:
            how += drift(probe, command.removesuffix(args), name, pins)
        found.candidates.append(Candidate(Slot.FORMAT, command, f"{name}: {where}; {how}", problem or missing))
        chosen = f"ruff format comes first ({where})"


def _ruff(probe: Probe, pyproject: dict[str, Any], hook: Hook | None) -> tuple[str, str] | None:
    """`ruff format --check`'s arguments and where its use shows: its settings, else its hook (the hook's flags and
    folders), else the lint script's line (its paths); None where none does."""
    script = script_targets(probe.repo, "ruff format", check=_CHECK)
    config = _ruff_settings(probe, pyproject)
    if script is not None and config is None and hook is None:
        return f" format {_CHECK}{script[0]}", f"`ruff format {_CHECK}` in {script[1]}"
    # ruff 0.16 and later also format Python blocks in Markdown files; a hook is given Python files only and a
    # project's pinned ruff may predate it: an agent's README is not judged on what the project's CI never checks.
    check = f" format {_CHECK} {_NOT_MARKDOWN}"
    targets = script[0] if script else " ."
    if config is None and hook is not None:
        return f"{check}{hook.check_args('format', added=_CHECK)}{hook.targets(targets)}", hook.where
    return (f"{check}{targets}", config) if config else None


def _ruff_settings(probe: Probe, pyproject: dict[str, Any]) -> str | None:
    """Where ruff's formatter has settings: [tool.ruff.format] in pyproject.toml, [format] in ruff.toml."""
    ruff = pyproject.get("tool", {}).get("ruff") if isinstance(pyproject.get("tool"), dict) else None
    if isinstance(ruff, dict) and isinstance(ruff.get("format"), dict):
        return "[tool.ruff.format] in pyproject.toml"
    for name in ("ruff.toml", ".ruff.toml"):
        path = probe.repo / name
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue  # ruff's lint candidate names the file; an unreadable one shows no formatter
        if isinstance(data.get("format"), dict):
            return f"[format] in {name}"
    return None


def _black(probe: Probe, pyproject: dict[str, Any], hooks: Mapping[str, Hook]) -> tuple[str, str] | None:
    """`black --check`'s arguments and where its use shows: [tool.black], else its hook (psf/black or
    black-pre-commit-mirror: the hook's flags and folders); the lint script's paths for black where it names some."""
    script = script_targets(probe.repo, "black", check=_CHECK)
    targets = script[0] if script else " ."
    tool = pyproject.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("black"), dict):
        return f" {_CHECK}{targets}", "[tool.black] in pyproject.toml"
    hook = hooks.get("black")
    if hook is not None:
        return f" {_CHECK}{hook.check_args(added=_CHECK)}{hook.targets(targets)}", hook.where
    return (f" {_CHECK}{targets}", f"`black {_CHECK}` in {script[1]}") if script else None


__all__ = ["FORMAT_HOOKS", "python_format"]
