"""Asking the machine instead of guessing: PATH look-ups, `make -n`, what an interpreter can import.

Every probe runs with the PATH detection was given and `LC_ALL=C` (make's messages are matched), through
pm-agent's own command runner, so a hanging `make -n` is killed as a process group at its timeout.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.gates.ward import CommandResult, run_command

PROBE_TIMEOUT_S = 20.0
"""Longest one probe may run: `make -n` on a large Makefile, a cold interpreter start."""

PYTHON_TOOLS = ("pytest", "ruff", "mypy", "flake8", "pyright", "django", "coverage", "black", "isort")
"""The modules whose importability decides between `<python> -m tool` and the executable on PATH (and whether a
Django project's interpreter has Django; coverage, black and isort: what hatch scripts run)."""

# Prints the major version, then the importable ones among the modules named in argv.
_PYTHON_SCRIPT = (
    "import importlib.util, sys\n"
    "print(sys.version_info[0])\n"
    "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is not None))\n"
)

# make's own messages ("make: 'test' is up to date."), as opposed to the recipe lines `make -n` prints.
# make's own lines in `make -n` output: `make[1]: ...`, and $(warning)'s `Makefile:5: ...`.
_MAKE_MESSAGE = re.compile(r"^(?:\S*make(\[\d+\])?|[^\s:]+:\d+): ")
# A program's name; $(info) prints free text (`**** checking ****`) among the recipe lines.
_PROGRAM_NAME = re.compile(r"[\w.+-]+")

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
"""The names GNU make reads, in its order."""


@dataclass(frozen=True)
class PythonInfo:
    """An interpreter that runs Python 3, and which of PYTHON_TOOLS it can import."""

    command: str
    """How pm-agent.yaml calls it: a bare name on PATH or the quoted absolute path of a repository venv."""
    label: str
    """How reasons name it, e.g. `.venv/bin/python`."""
    modules: frozenset[str]


@dataclass
class Probe:
    """Probes of one repository under one PATH; results are cached, each tool is asked once."""

    repo: Path
    path: str
    timeout_s: float = PROBE_TIMEOUT_S
    workspace: Path | None = None
    """The root of the uv workspace the project is a member of, which keeps the members' .venv; None: not one."""
    _runs: dict[str, CommandResult] = field(default_factory=dict)

    def which(self, name: str) -> str | None:
        """The executable `name` on this PATH, or None."""
        return shutil.which(name, path=self.path)

    def run(self, argv: list[str], env: dict[str, str] | None = None) -> CommandResult:
        """Run `argv` in the repository, `env` added to the environment (cached by command line and `env`)."""
        cmd = shlex.join(argv)
        key = cmd + "".join(f"\0{k}={v}" for k, v in sorted((env or {}).items()))
        if key not in self._runs:
            full = {"PATH": self.path, "LC_ALL": "C", **(env or {})}
            self._runs[key] = run_command(cmd, self.repo, timeout_s=self.timeout_s, env=full)
        return self._runs[key]

    def runs(self, exe: str) -> str | None:
        """Why `exe --version` does not work (a pyenv shim without a version, ...), or None when it does."""
        if self.which(exe) is None:
            return f"{exe} is not on PATH"
        result = self.run([exe, "--version"])
        return None if result.ok else f"`{exe} --version` failed: {_last_line(result)}"

    def python(self, exe: str) -> PythonInfo | str:
        """What the interpreter `exe` can import, or why it cannot be used (absent, fails, Python 2)."""
        result = self.run([exe, "-c", _PYTHON_SCRIPT, *PYTHON_TOOLS])
        lines = result.output_tail.splitlines()
        if not result.ok or not lines:
            return f"does not run ({_last_line(result)})"
        if lines[0].strip() != "3":
            return f"is Python {lines[0].strip()}, not Python 3"
        modules = frozenset(lines[1].split()) if len(lines) > 1 else frozenset[str]()
        return PythonInfo(command=exe, label=exe, modules=modules)

    def makefile(self) -> str | None:
        """The Makefile GNU make would read here, or None."""
        return next((name for name in MAKEFILES if (self.repo / name).is_file()), None)

    def make_target(self, target: str) -> str | None:
        """Why `make <target>` cannot be a gate command, or None when `make -n <target>` shows work to do.

        `make -n` prints the recipes without running them (except `+` lines and recursive makes, which
        dry-run in turn). A target make calls "up to date" with nothing to do is refused too: with a
        `test/` directory and no `test` rule, `make test` exits 0 having tested nothing.
        """
        if self.which("make") is None:
            return "make is not on PATH"
        result = self.run(["make", "--no-print-directory", "-n", target])
        if result.timed_out:
            return f"make -n {target} timed out after {self.timeout_s:g}s"
        output = result.output_tail
        if not result.ok:
            if re.search(rf"No rule to make target [`']{re.escape(target)}'\.", output):
                return f"{self.makefile() or 'Makefile'} has no {target} target (make -n {target} failed)"
            return f"make -n {target} failed: {_last_line(result)}"
        if not any(line.strip() and not _MAKE_MESSAGE.match(line) for line in output.splitlines()):
            return f"make -n {target} runs nothing ({_last_line(result)})"
        return None

    def recipe_missing(self, target: str) -> str | None:
        """The first program `make <target>`'s recipe lines start that is not on PATH (a tool the project keeps in
        its virtualenv, a runner such as uv not installed): make would fail at once, exit 2 for a missing 127."""
        result = self.run(["make", "--no-print-directory", "-n", target])
        for line in result.output_tail.splitlines():
            if _MAKE_MESSAGE.match(line):
                continue
            words = [w for w in _words(line) if "=" not in w]  # past `VAR=value` assignments
            program = words[0] if words else ""
            if _PROGRAM_NAME.fullmatch(program) and program not in _SHELL_WORDS and self.which(program) is None:
                return program
        return None


# What a recipe line may start with that is no program on PATH: shell builtins and keywords.
_SHELL_WORDS = frozenset(
    {"cd", "export", "source", ".", "set", "unset", "if", "then", "else", "fi", "for", "while", "do", "done", "case",
     "[", "[[", "exit", "return", ":", "eval", "exec", "trap", "shift", "read", "local", "{", "(", "!", "umask",
     "ulimit", "alias", "command", "type", "hash", "wait"}
)  # fmt: skip


def _words(line: str) -> list[str]:
    """A recipe line's words as the shell splits them (a line shlex cannot split: none)."""
    try:
        return shlex.split(line.strip().lstrip("@+-"))
    except ValueError:
        return []


def _last_line(result: CommandResult) -> str:
    lines = [line.strip() for line in result.output_tail.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit {result.exit_code}"
