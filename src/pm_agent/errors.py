"""The one exception tree of pm-agent; the CLI turns these into messages and exit codes.

PmAgentError
 ├── InputError            bad user input: a plan, a config or a workflow file (exit 2)
 │    ├── PlanError         malformed plan or design doc, dependency cycle, unknown or duplicate task
 │    ├── ConfigError       unknown key or bad value in .pm-agent config
 │    └── WorkflowError     a workflow file that does not load or does not check
 ├── TransitionError       an invalid lifecycle transition (state left unchanged)
 ├── StoreError            the state store refused or failed a change (nothing written)
 │    └── NotFoundError     an unknown run, task or escalation id
 ├── AgentError            an agent process could not start or run
 ├── SignalError           a signal refused: bad token, wrong task, role not allowed, bad payload
 └── VcsError              a git command failed
"""

from __future__ import annotations

from pathlib import Path


class PmAgentError(Exception):
    """Base of every error pm-agent raises on purpose."""

    exit_code = 1


class InputError(PmAgentError):
    """Bad input from the user; carries the offending file and line when known."""

    exit_code = 2

    def __init__(self, message: str, *, path: Path | str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = Path(path) if path is not None else None
        self.line = line
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{self.message}"


class PlanError(InputError):
    """A plan or design doc that cannot be turned into tasks."""


class ConfigError(InputError):
    """A configuration file with an unknown key or a bad value."""


class WorkflowError(InputError):
    """A workflow file that does not load or fails its check."""


class TransitionError(PmAgentError):
    """A lifecycle transition that the workflow does not allow."""


class StoreError(PmAgentError):
    """The state store refused or failed a change; nothing was written."""


class NotFoundError(StoreError):
    """An unknown run, task, session or escalation id."""

    exit_code = 2


class AgentError(PmAgentError):
    """An agent process could not be started or driven."""


class SignalError(PmAgentError):
    """A signal_back call that was refused."""


class VcsError(PmAgentError):
    """A git command failed."""


class SetupError(PmAgentError):
    """`environment.setup_command` failed in a worktree: nothing an agent or a gate can do there without it."""
