"""The linters a repository runs through pre-commit: `.pre-commit-config.yaml`'s hooks, as detection's evidence.

Many Python projects configure ruff, flake8 or mypy nowhere but in their pre-commit hooks (ruff needs no
configuration file, mypy's flags sit in the hook's `args`). pm-agent does not run `pre-commit` itself: its hooks
fix files in place (`ruff --fix`, formatters), which would edit an agent's work behind the tree the gates checked,
and install their tools from the network on first use. It runs the same tool with the hook's own flags, less
those that fix files (`check_args`), from the project's interpreter or PATH.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pm_agent.preflight._candidates import Rejected
from pm_agent.preflight._probe import Probe

CONFIG = ".pre-commit-config.yaml"
# Flags that make a hook fix files or only fix them: left out of the check pm-agent runs.
_FIXING = {"--fix", "--exit-non-zero-on-fix", "--show-fixes", "--unsafe-fixes", "--no-fix"}
# mirrors-mypy's own `args` when a config gives none (its .pre-commit-hooks.yaml); the second only shapes output.
_DEFAULT_ARGS = {"mypy": ("--ignore-missing-imports",)}
# `files: ^src/` (or `^(src|tests)/`): the folders a hook checks, when its pattern names only folders.
_FOLDERS = re.compile(r"\^\(?([\w.-]+(?:\|[\w.-]+)*)\)?/")


@dataclass(frozen=True)
class Hook:
    """One hook of the config: its id as detection looks it up, flags, the folders it is limited to, and where it
    is (`label`: the id the config gives it, when that is another: `local-ruff-format`)."""

    id: str
    args: tuple[str, ...]
    folders: tuple[str, ...]
    line: int
    label: str = ""

    @property
    def where(self) -> str:
        """`hook ruff-check in .pre-commit-config.yaml line 7`."""
        return f"hook {self.label or self.id} in {CONFIG} line {self.line}"

    def check_args(self, subcommand: str = "", *, added: str = "") -> str:
        """The hook's flags less those that fix files (and a local hook's leading `subcommand`), as a command-line
        suffix: ` --strict`, or ""; `added` the flag the caller puts before them (`--check`), not repeated."""
        args = self.args[1:] if subcommand and self.args[:1] == (subcommand,) else self.args
        dropped = _FIXING | {added}
        return "".join(f" {shlex.quote(a)}" for a in args if a.split("=", 1)[0] not in dropped)

    def targets(self, default: str) -> str:
        """The folders the hook is limited to, else `default`, as a command-line suffix."""
        return "".join(f" {shlex.quote(f)}" for f in self.folders) or default


def read_hooks(repo: Path, notes: list[Rejected]) -> dict[str, Hook]:
    """The config's hooks by id (the first of each id); {} without a config, with why in `notes` when unreadable."""
    path = repo / CONFIG
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        notes.append(Rejected(CONFIG, f"not valid YAML ({_first_line(exc)}); its hooks were not read"))
        return {}
    repos = data.get("repos") if isinstance(data, dict) else None
    if not isinstance(repos, list):
        notes.append(Rejected(CONFIG, "no `repos:` list; its hooks were not read"))
        return {}
    hooks: dict[str, Hook] = {}
    for entry in repos:
        for hook in (entry.get("hooks") if isinstance(entry, dict) else None) or []:
            found = _hook(hook, entry, text)
            if found is not None:
                hooks.setdefault(found.id, found)
    return hooks


def _hook(hook: Any, entry: dict[str, Any], text: str) -> Hook | None:
    if not isinstance(hook, dict) or not isinstance(hook.get("id"), str):
        return None
    hook_id: str = hook["id"]
    label, args = hook_id, hook.get("args")
    if entry.get("repo") == "local" or "entry" in hook:
        # A local hook (or one whose `entry` replaces its repository's) runs `entry` with the file names appended:
        # its flags follow the tool's name.
        words = str(hook.get("entry") or "").split()
        if words and Path(words[0]).name != hook_id.split("-")[0]:
            hook_id, words = _runner_hook(hook_id, words)
        if not words or Path(words[0]).name != hook_id.split("-")[0]:
            return None  # `poetry run mypy`, a script: not a command pm-agent can take apart
        args = [*words[1:], *(args or [])]
    if args is None:
        args = list(_DEFAULT_ARGS.get(hook_id, ()))
    if not isinstance(args, list):
        return None
    files = hook.get("files")
    folders = _FOLDERS.fullmatch(files.split("/", 1)[0] + "/") if isinstance(files, str) else None
    return Hook(
        id=hook_id,
        args=tuple(str(a) for a in args),
        folders=tuple(folders.group(1).split("|")) if folders else (),
        line=_line_of(text, label),
        label=label,
    )


# A local hook that runs ruff or black through the project's runner, under an id of its own (full-stack-fastapi-
# template: `local-ruff-format` runs `uv run ruff format`): the tool pm-agent runs from the project's interpreter
# itself. mypy and pyright through a runner stay unread: what they check depends on the files pre-commit passes.
_RUNNERS = (("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("hatch", "run"), ("pipenv", "run"))


def _runner_hook(hook_id: str, words: list[str]) -> tuple[str, list[str]]:
    """(the hook's id as pm-agent's detection knows it, the entry's words from the tool on) for `uv run ruff format`
    and the like; `hook_id` and `words` unchanged for anything else."""
    tool = next((words[2:] for runner in _RUNNERS if tuple(words[:2]) == runner), [])
    if tool[:1] == ["ruff"]:
        return ("ruff-format" if tool[1:2] == ["format"] else "ruff-check"), tool
    if tool[:1] == ["black"]:
        return "black", tool
    return hook_id, words


# The hook repositories that pin a Python tool's version by their `rev` (the tool's own release tags).
_PINNING = {
    "astral-sh/ruff-pre-commit": "ruff",
    "charliermarsh/ruff-pre-commit": "ruff",
    "pre-commit/mirrors-mypy": "mypy",
    "pycqa/flake8": "flake8",
    "psf/black": "black",
    "psf/black-pre-commit-mirror": "black",
}
_VERSION = re.compile(r"v?(\d+\.\d+(?:\.\d+)?)")


def pinned_versions(repo: Path) -> dict[str, str]:
    """tool -> the version the config's hooks pin (`rev: v0.15.16` of ruff-pre-commit -> "0.15.16"); {} without one."""
    try:
        data: Any = yaml.safe_load((repo / CONFIG).read_text(encoding="utf-8", errors="replace"))
    except (OSError, yaml.YAMLError):
        return {}
    pins: dict[str, str] = {}
    for entry in data.get("repos", []) if isinstance(data, dict) and isinstance(data.get("repos"), list) else []:
        url, rev = (str(entry.get(k, "")) for k in ("repo", "rev")) if isinstance(entry, dict) else ("", "")
        tool = _PINNING.get("/".join(url.lower().removesuffix(".git").rstrip("/").split("/")[-2:]))
        version = _VERSION.fullmatch(rev.strip())
        if tool is not None and version is not None:
            pins.setdefault(tool, version.group(1))
    return pins


def drift(probe: Probe, runs: str, tool: str, pins: Mapping[str, str]) -> str:
    """A note when the tool that runs is not the version the project's pre-commit hooks pin (`pins`, from
    `pinned_versions`): a newer ruff reports rules the project never saw (structlog's ruff 0.15 pin against 0.17: a
    copyright finding on every new file), a formatter of another version formats differently; "" without a pin."""
    pinned = pins.get(tool)
    if pinned is None:
        return ""
    said = probe.run([*shlex.split(runs), "--version"]).output_tail
    found = re.search(r"(\d+\.\d+(?:\.\d+)?)", said)
    if found is None or found.group(1) == pinned:
        return ""
    here = found.group(1)
    return f"; {tool} {here} here, but {CONFIG} pins {pinned}: its findings may differ (install {tool}=={pinned})"


def _line_of(text: str, hook_id: str) -> int:
    found = re.search(rf"^[ \t-]*id:[ \t]*['\"]?{re.escape(hook_id)}['\"]?[ \t]*(?:#.*)?$", text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _first_line(exc: yaml.YAMLError) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


__all__ = ["CONFIG", "Hook", "drift", "pinned_versions", "read_hooks"]
