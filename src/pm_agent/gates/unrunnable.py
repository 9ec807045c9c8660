"""Why a command could not run at all (a missing program, dependencies not installed in the checkout, a script or
target that does not exist, a registry out of reach): a human's problem, not something a task's change made.

The baseline's run of each command is read with `baseline_cannot_run` (the preflight stops on it, with a fix); a
gate's run with `cannot_run_reason` (the task escalates). A command that cannot run must never pass for one that
fails on the baseline: its gate would then pass whatever a task did.
"""

from __future__ import annotations

import re
from pathlib import Path

from pm_agent.gates.ward import CommandResult

_NO_MODULE = re.compile(r"python[\w.]*: No module named ([\w.]+)")  # `python -m X` without X, not an import error
_NPM_SCRIPT = re.compile(r"npm (?:ERR!|error) Missing script: \"?([\w:.-]+)")
_MAKE_TARGET = re.compile(r"make: \*\*\* No rule to make target '([^']+)'")
_NO_SUBCOMMAND = re.compile(r"error: no such (?:sub)?command:? [`']?([\w-]+)")
_GRADLE_TASK = re.compile(r"Task '([^']+)' not found in (?:root )?project")
# A package manager that cannot fetch the project's dependencies (no network, no registry): cargo's resolution error,
# go's module download, npm's lookup, maven's transfer, gradle's GET and its wrapper's download (not "Could not find
# artifact" or gradle's "Could not find x:y:1": a version that does not exist is the task's to fix). The first line
# that says so, past any colour codes; nothing a task's change can fix.
_NO_FETCH = re.compile(
    r"^(?:\x1b\[[\d;]*m)*"
    r"(error: failed to (?:get `[^`]+` as a dependency of package|download from|load source for dependency)[^\n]*"
    r"|go: [^\n]*: (?:Get \"[^\"]+\": )?dial tcp[^\n]*"
    r"|npm (?:ERR!|error) (?:code |errno )?(?:ENOTFOUND|EAI_AGAIN)[^\n]*)",
    re.MULTILINE,
)
_NO_FETCH_MAVEN = re.compile(r"^(?:\x1b\[[\d;]*m)*\[ERROR\] [^\n]*?(Could not transfer artifact[^\n]*)", re.MULTILINE)
_NO_FETCH_GRADLE = re.compile(
    r"^[ >]*(Could not (?:GET|HEAD) '[^\n]*"
    r"|(?:Exception in thread \"main\" )?java\.net\.(?:UnknownHost|Connect|NoRouteToHost)Exception[^\n]*)",
    re.MULTILINE,
)
# bundler without a gem of the Gemfile; composer without the network (its message boxed in spaces).
_NO_FETCH_BUNDLER = re.compile(
    r"(Could not find gem '[^']+' in locally installed gems[^\n]*?)(?: \(Bundler::GemNotFound\))?$", re.MULTILINE
)
_NO_FETCH_COMPOSER = re.compile(
    r"^\s*(The \"[^\"]+\" file could not be downloaded|curl error \d+ while downloading [^\n]*)", re.MULTILINE
)
# A package manager that finds its install missing from the checkout (a fresh worktree has no node_modules/ of its
# own): Yarn 2+ without its install state, pnpm's warning before the script's program is not found.
_NOT_INSTALLED = re.compile(
    r"(Couldn't find the node_modules state file[^\n]*"
    r"|Local package\.json exists, but node_modules missing[^\n]*"
    r"|npx canceled due to missing packages[^\n]*)"  # npx asked to fetch a tool node_modules/ should hold
)
# rustup's proxy for a component the toolchain lacks (`cargo fmt` without rustfmt, `cargo clippy` without clippy).
_RUSTUP = re.compile(
    r"error: '([\w-]+)' is not installed for the toolchain '([^']+)'\.?(?:\s*To install, run `([^`]+)`)?"
)
RUSTUP_MISSING = "a rustup component is missing"
_COLOUR = re.compile(r"\x1b\[[\d;]*m")
# corepack, the shim Node.js ships for yarn and pnpm, failing to fetch or verify the package manager a project's
# packageManager names (no registry, "Cannot find matching keyid" after npm rotated its signing keys, "No compatible
# signature found in package metadata" from a mirror, "Mismatch hashes"): a stack trace through its own code, the
# error's line before it (`Error: ...`, older corepacks' `Internal Error: ...`).
_COREPACK_FRAME = re.compile(r"^\s+at .*corepack[/\\]dist[/\\](?:lib[/\\])?corepack\.c?js:\d+", re.MULTILINE)
_COREPACK_ERROR = re.compile(r"^(?:Internal Error|Error): [^\n]*", re.MULTILINE)
COREPACK = "corepack could not fetch or verify the package manager"
# make running a recipe whose program does not exist exits 2, not 127: its own line says 127.
_MAKE_127 = re.compile(r"^make(?:\[\d+\])?: \*\*\* \[[^\]\n]*\] Error 127$", re.MULTILINE)
_PROGRAM = r"([\w@+./-]+)"
# What a shell (or make) says of a program it cannot find or run: zsh `zsh: command not found: xo`, dash
# `sh: 1: xo: not found`, bash `bash: xo: command not found`, `sh: 1: ./bin/xo: Permission denied`, make
# `make: uv: No such file or directory` or `make: uv: Command not found`.
SHELL_SAYS = (
    re.compile(rf"command not found: {_PROGRAM}"),
    re.compile(rf"(?:^|[\s:]){_PROGRAM}: (?:command )?not found\b"),
    re.compile(rf"(?:^|[\s:]){_PROGRAM}: Permission denied"),
    re.compile(rf"(?:^|\s)make(?:\[\d+\])?: {_PROGRAM}: (?:No such file or directory|Command not found)"),
)
# pytest stopped while collecting because a module could not be imported.
_COLLECTION_STOPPED = re.compile(r"Interrupted: \d+ errors? during collection")
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_REASON_CHARS = 300  # a quoted line past this is cut (maven's run to a thousand characters)
NOT_INSTALLED = "the project's dependencies are not installed in this checkout"


def program_named(text: str) -> str | None:
    """The program a shell or make says it could not find or run, as its message names it."""
    for pattern in SHELL_SAYS:
        found = pattern.search(text)
        if found is not None:
            return found.group(1)
    return None


def _cut(text: str) -> str:
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


def cannot_run_reason(result: CommandResult, timeout_s: float) -> str | None:
    """Why a command could not run at all, None when it ran (whatever its exit code)."""
    text = result.output if result.output is not None else result.output_tail
    if result.timed_out:
        return f"timed out after {timeout_s:g}s"
    installed = None if result.exit_code == 0 else _NOT_INSTALLED.search(_COLOUR.sub("", text))
    if installed is not None:
        return f"{NOT_INSTALLED}: {_cut(installed.group(1).strip())}"
    frame = None if result.exit_code == 0 else _COREPACK_FRAME.search(text)
    if frame is not None:
        errors = [m.group(0).strip() for m in _COREPACK_ERROR.finditer(text, 0, frame.start())]
        return f"{COREPACK}: {_cut(errors[-1] if errors else frame.group(0).strip())}"
    rustup = None if result.exit_code == 0 else _RUSTUP.search(text)
    if rustup is not None:
        install = rustup.group(3) or f"rustup component add {rustup.group(1).removeprefix('cargo-')}"
        return f"{RUSTUP_MISSING}: {rustup.group(1)} is not installed for the toolchain {rustup.group(2)} (`{install}`)"
    # Not split for a command that passed: a test run's output can be half a megabyte, on every gate run.
    lines = [line.strip() for line in text.splitlines() if line.strip()] if result.exit_code != 0 else []
    if result.exit_code in (126, 127) or _MAKE_127.search(text):
        # The line naming the program, else the last one (pnpm and npm print more after the shell's).
        said = next((line for line in reversed(lines) if program_named(line)), lines[-1] if lines else "")
        where = "" if result.exit_code in (126, 127) else " in a make recipe"
        code = result.exit_code if result.exit_code in (126, 127) else 127
        return f"exit {code}{where}: {_cut(said)}"
    if len(lines) == 1 and program_named(lines[0]):
        # All it printed is the shell's complaint: a program in a command substitution (init's gofmt check,
        # `out=$(gofmt -l .)`) whose 127 the outer command does not pass on. A test run never prints one line.
        return f"exit 127 inside the command: {_cut(lines[0])}"
    for pattern, what in (
        (_NO_MODULE, "No module named {}"),
        (_NPM_SCRIPT, 'package.json has no script "{}"'),
        (_MAKE_TARGET, "the Makefile has no target {}"),
        (_NO_SUBCOMMAND, "no such command: {}"),
        (_GRADLE_TASK, "the gradle build has no task {}"),
        (_NO_FETCH, "the dependencies cannot be fetched: {}"),
        (_NO_FETCH_MAVEN, "the dependencies cannot be fetched: {}"),
        (_NO_FETCH_GRADLE, "the dependencies cannot be fetched: {}"),
        (_NO_FETCH_BUNDLER, "the dependencies cannot be fetched: {}"),
        (_NO_FETCH_COMPOSER, "the dependencies cannot be fetched: {}"),
    ):
        found = pattern.search(text)
        if found:
            return what.format(_cut(found.group(1)))
    return None


def baseline_cannot_run(result: CommandResult, timeout_s: float) -> str | None:
    """`cannot_run_reason`, and on the baseline also a test run that pytest stopped while collecting because
    modules that are not the project's are missing: its gate would run no test at all, whatever a task did.
    (In a task's gate run that is the task's to fix: an import it added.)"""
    why = cannot_run_reason(result, timeout_s)
    if why is not None or result.exit_code != 2:
        return why
    text = result.output if result.output is not None else result.output_tail
    if not _COLLECTION_STOPPED.search(text):
        return None
    missing = sorted({name for name in _MISSING_MODULE.findall(text) if not _projects_own(result.cwd, name)})
    if not missing:
        return None
    return f"the test environment lacks {', '.join(missing)} (pytest stopped while collecting: no test ran)"


def _projects_own(cwd: str, module: str) -> bool:
    """Whether `module`'s top package is in the checkout (at its top, in src/, or one folder down): the project's own
    code, which a broken import of is a real failure, not a missing install."""
    if not cwd:
        return True  # nowhere to look: not a missing install for certain
    top = module.split(".", 1)[0]
    root = Path(cwd)
    for base in (root, root / "src", *root.glob("*/"), *root.glob("*/src/")):
        if (base / top).is_dir() or (base / f"{top}.py").is_file():
            return True
    return False


__all__ = ["COREPACK", "NOT_INSTALLED", "SHELL_SAYS", "baseline_cannot_run", "cannot_run_reason", "program_named"]
