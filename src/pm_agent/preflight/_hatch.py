"""hatch's environment scripts (`[tool.hatch.envs.<env>.scripts]` in pyproject.toml, `[envs.<env>.scripts]` in
hatch.toml): the project's own test, lint and typecheck commands.

pm-agent runs a script's commands itself with the interpreter init chose for the project (`mypy mkdocs` becomes
`<python> -m mypy mkdocs`), not through `hatch run types:check`: hatch may not be installed, and a gate runs in a
fresh worktree whatever hatch would make there. A script that is a list of commands, or names another script of its
environment, becomes one command joined with `&&` (hatch too stops at the first failing command). `{args}` takes
its default (a gate passes no arguments); any other placeholder (`{env:VAR}`, `{root}`, `{matrix:...}`) only hatch
fills in, and shell syntax pm-agent would have to rewrite: such a script is rejected with the reason.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot
from pm_agent.preflight._probe import PYTHON_TOOLS, Probe, PythonInfo

Tool = Callable[[str, str, str], tuple[str, str, str | None]]
"""(module, executable, arguments) -> (command, how it runs, problem): `_python._tool` for the chosen interpreter."""

# (slot, the environments whose scripts count (None: any), the script names), in order of preference: hatch's
# templates and projects name them so (`hatch run test`, `hatch run types:check`, `hatch run lint:style`).
_RULES: tuple[tuple[Slot, tuple[str, ...] | None, tuple[str, ...]], ...] = (
    (Slot.TEST, ("default", "test", "tests", "testing", "unit"), ("test", "tests")),
    (Slot.LINT, ("lint", "linting", "style"), ("check", "lint", "style")),
    (Slot.LINT, None, ("lint", "style", "check-style")),
    (Slot.TYPECHECK, ("types", "typing", "typecheck", "type-check", "mypy"), ("check", "typecheck", "types", "typing")),
    (Slot.TYPECHECK, None, ("typecheck", "type-check", "types", "typing", "check-types", "mypy")),
)
# Programs of a script that are Python modules the interpreter runs with -m: the environment hatch would make
# has them on its PATH, the interpreter init chose imports them (or they are marked not installed).
_MODULES = {
    "pytest": "pytest",
    "py.test": "pytest",
    "mypy": "mypy",
    "ruff": "ruff",
    "flake8": "flake8",
    "pyright": "pyright",
    "coverage": "coverage",
    "black": "black",
    "isort": "isort",
}
_PYTHON = re.compile(r"python(3(\.\d+)?)?")
_ARGS = re.compile(r"\{args(?::([^{}]*))?\}")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_MAX_DEPTH = 8


class _Refused(Exception):
    """Why a script cannot become a gate command."""


def hatch_scripts(
    probe: Probe, pyproject: dict[str, Any], python: PythonInfo, problem: str | None, tool: Tool, found: Finding
) -> None:
    """Candidates from the project's hatch scripts (before the ones its tool settings make), run with `python`."""
    envs, where = _environments(probe.repo, pyproject, found)
    if not envs:
        return
    hatch = "" if probe.which("hatch") else " (hatch is not on PATH)"
    done: set[tuple[str, str]] = set()
    for slot, names, scripts in _RULES:
        for env in names if names is not None else tuple(envs):
            own = _table(envs.get(env), "scripts")
            for name in (s for s in scripts if s in own and (env, s) not in done):
                done.add((env, name))
                label = f"hatch script {env}:{name}"
                try:
                    parts = [_translate(probe, python, tool, c) for c in _expand(_scripts(envs, env), name)]
                except _Refused as exc:
                    found.rejected.append(Rejected(label, str(exc), slot))
                    continue
                raw = own[name] if isinstance(own[name], str) else " && ".join(map(str, own[name]))
                command = " && ".join(command for command, _ in parts)
                reason = (
                    f"{label} ({where.format(env=env)}): `{raw}`, the project's own; its commands run with"
                    f" {python.label}, not through `hatch run {env}:{name}`{hatch}"
                )
                missing = "; ".join(dict.fromkeys(p for _, p in parts if p)) or None
                if missing and env != "default":
                    missing += f" (hatch would run it in its `{env}` environment, with that environment's tools)"
                found.candidates.append(Candidate(slot, command, reason, problem or missing))


def _environments(repo: Path, pyproject: dict[str, Any], found: Finding) -> tuple[dict[str, Any], str]:
    """hatch's environments table and where it is written (`{env}` for the environment's name)."""
    envs = _table(_table(_table(pyproject, "tool"), "hatch"), "envs")
    if envs:
        return envs, "[tool.hatch.envs.{env}.scripts] in pyproject.toml"
    path = repo / "hatch.toml"
    if not path.is_file():
        return {}, ""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        found.rejected.append(Rejected("hatch.toml", f"not valid TOML ({exc}); its scripts were not read"))
        return {}, ""
    return _table(data, "envs"), "[envs.{env}.scripts] in hatch.toml"


def _table(node: Any, key: str) -> dict[str, Any]:
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, dict) else {}


def _scripts(envs: dict[str, Any], env: str) -> dict[str, Any]:
    """The scripts an environment has: its own over the default environment's, which every environment inherits
    unless detached."""
    table = envs.get(env)
    inherits = env != "default" and not (isinstance(table, dict) and table.get("detached"))
    return {**(_table(envs.get("default"), "scripts") if inherits else {}), **_table(table, "scripts")}


def _expand(scripts: dict[str, Any], name: str, extra: str = "", seen: tuple[str, ...] = ()) -> Iterator[str]:
    """The commands script `name` runs, other scripts' expanded (their extra words appended to each of their
    commands, as hatch does), `{args}` replaced by its default."""
    if name in seen or len(seen) > _MAX_DEPTH:
        raise _Refused(f"`{seen[0] if seen else name}` refers to itself through `{name}`")
    value = scripts[name]
    commands = [value] if isinstance(value, str) else value
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        raise _Refused(f"script `{name}` is neither a command nor a list of commands")
    for command in commands:
        first, _, rest = command.strip().partition(" ")
        if first in scripts:
            yield from _expand(scripts, first, f"{rest} {extra}".strip(), (*seen, name))
            continue
        filled = _ARGS.sub(lambda m: m.group(1) or "", command).strip()
        other = _PLACEHOLDER.search(filled)
        if other:
            raise _Refused(f"`{command}` uses hatch's `{other.group(0)}` placeholder, which only hatch fills in")
        yield f"{filled} {extra}".strip()


def _translate(probe: Probe, python: PythonInfo, tool: Tool, command: str) -> tuple[str, str | None]:
    """One command of a script as the gate runs it, and what stands in its way."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise _Refused(f"`{command}` cannot be split into words ({exc})") from None
    if "`" in command or "$(" in command or any(t and set(t) <= set("();<>|&") for t in tokens):
        raise _Refused(f"`{command}` uses shell syntax (pipes, redirections, `&&`) pm-agent does not rewrite")
    at = next((i for i, t in enumerate(tokens) if not _ASSIGNMENT.match(t)), len(tokens))
    if at == len(tokens):
        raise _Refused(f"`{command}` runs no program")
    env_vars = shlex.join(tokens[:at]) + " " if at else ""
    program, rest = tokens[at], tokens[at + 1 :]
    args = " " + shlex.join(rest) if rest else ""
    if _PYTHON.fullmatch(program):
        module = rest[1] if rest[:1] == ["-m"] and len(rest) > 1 else ""
        if module in PYTHON_TOOLS and module not in python.modules:
            return env_vars + python.command + args, f"not installed: {module} is not importable by {python.label}"
        return env_vars + python.command + args, None
    if program in _MODULES:
        if program == "ruff" and rest[:1] == ["check"] and not {"--fix", "--no-fix"} & set(rest):
            # `fix = true` in the project's ruff settings would make the gate rewrite the files it checks.
            args = " " + shlex.join(["check", "--no-fix", *rest[1:]])
        gate, _, missing = tool(_MODULES[program], program, args)
        return env_vars + gate, missing
    missing = None
    if "/" not in program and probe.which(program) is None:
        missing = f"{program} is not on PATH"
    return env_vars + shlex.join([program, *rest]), missing


__all__ = ["hatch_scripts"]
