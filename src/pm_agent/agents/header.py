"""The session header: the first line pm-agent appends to every agent session's system prompt.

`pm-agent session: role=<role> task=<task-ref> attempt=<n> workdir=<absolute path>` names the session
for people reading transcripts and for scripted models (the demo, the tests), which route on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["SESSION_RE", "SessionHeader", "parse_session_header", "session_header"]

SESSION_RE: Final = re.compile(
    r"^pm-agent session: role=(?P<role>[\w-]+) task=(?P<task>\S+) attempt=(?P<attempt>\d+) "
    r"workdir=(?P<workdir>\S.*?)\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class SessionHeader:
    """The first line pm-agent appends to a session's system prompt."""

    role: str
    task: str
    attempt: int
    workdir: Path

    def line(self) -> str:
        """The header line as pm-agent writes it."""
        return session_header(self.role, self.task, self.attempt, self.workdir)


def session_header(role: str, task: str, attempt: int, workdir: Path | str) -> str:
    """`pm-agent session: role=<role> task=<task-ref> attempt=<n> workdir=<absolute path>`."""
    return f"pm-agent session: role={role} task={task} attempt={attempt} workdir={Path(workdir).resolve()}"


def parse_session_header(system_text: str) -> SessionHeader | None:
    """The session header in a system prompt, None when there is none."""
    match = SESSION_RE.search(system_text)
    if match is None:
        return None
    return SessionHeader(
        role=match["role"].lower(),
        task=match["task"],
        attempt=int(match["attempt"]),
        workdir=Path(match["workdir"]),
    )
