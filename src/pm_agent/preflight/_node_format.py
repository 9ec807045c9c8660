"""A Node project's format check: its check script, else the check of the formatter its `format` script runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot
from pm_agent.preflight._node_scripts import EXEC, REWRITES, delegated_script, run_script


def format_script(
    repo: Path,
    managed: tuple[str, str],
    names: tuple[str, ...],
    scripts: dict[str, str],
    data: dict[str, Any],
    problems: tuple[str | None, str | None],
    found: Finding,
) -> str | None:
    """The first format-check script that rewrites nothing (nor does the workspace package's script it runs); the
    ones that do are rejected: a gate that formats would take the formatter's edits for the task's change. Without
    one, the check of a `format` script's formatter is a candidate of its own (`_format_writer`)."""
    manager = managed[0]
    for name in (n for n in names if n in scripts):
        delegated = delegated_script(repo, scripts[name], data)
        text = delegated[1] if delegated is not None else scripts[name]
        flags = REWRITES.findall(text)
        if not flags:
            return name
        why = f"scripts.{name} ({text}) rewrites files ({', '.join(dict.fromkeys(flags))}): a format check only checks"
        found.rejected.append(Rejected(run_script(manager, name), why, Slot.FORMAT))
    _format_writer(repo, scripts, data, managed, *problems, found)
    return None


# A `format` script that runs one formatter in place, read as that formatter's check, as CI runs it (vite-plugin-react's
# CI: `pnpm format --check` for `"format": "oxfmt"`): prettier and oxfmt with `--check`, biome format without `--write`
# (it then only reports), dprint's `check`. (binary, its check, its package)
_FORMATTERS = {
    "prettier": ("prettier", "prettier --check", "prettier"),
    "oxfmt": ("oxfmt", "oxfmt --check", "oxfmt"),
    "biome format": ("biome", "biome format", "@biomejs/biome"),
    "dprint fmt": ("dprint", "dprint check", "dprint"),
}
_FORMAT_WRITER = re.compile(r"^(?P<tool>prettier|oxfmt|biome format|dprint fmt)(?P<args>(?:\s+[^\s;&|<>`$()]+)*)\s*$")


def _format_writer(
    repo: Path,
    scripts: dict[str, str],
    data: dict[str, Any],
    managed: tuple[str, str],
    problem: str | None,
    pnp: str | None,
    found: Finding,
) -> None:
    """The check of the formatter a `format` (or `fmt`, `prettier`) script runs in place, when it runs one alone and
    its package is a dependency (else npx would fetch whatever has that name: rejected, with why)."""
    manager, how = managed
    for name in (n for n in ("format", "fmt", "prettier") if n in scripts):
        matched = _FORMAT_WRITER.match(scripts[name].strip())
        if matched is None:
            continue
        binary, check, package = _FORMATTERS[matched.group("tool")]
        args = [a for a in matched.group("args").split() if not REWRITES.fullmatch(a) and a != "--check"]
        command = " ".join([EXEC[manager], check, *args])
        deps = [key for key in ("devDependencies", "dependencies") if package in (data.get(key) or {})]
        if not deps:
            why = f"scripts.{name} runs {binary}, but {package} is not in devDependencies (npx would fetch it)"
            found.rejected.append(Rejected(command, why, Slot.FORMAT))
            return
        if problem is None and pnp is None and not (repo / "node_modules" / ".bin" / binary).exists():
            problem = f"not installed: node_modules/.bin/{binary} is missing (run `{manager} install`)"
        reason = (
            f"package.json scripts.{name} ({scripts[name]}) formats in place: its check; {package} in {deps[0]}; {how}"
        )
        found.candidates.append(Candidate(Slot.FORMAT, command, reason, problem))
        return


__all__ = ["format_script"]
