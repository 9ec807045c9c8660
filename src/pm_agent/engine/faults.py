"""Named fault points for crash tests (DESIGN.md: test each durable boundary deterministically).

`PM_AGENT_FAULT=after-task-commit` makes pm-agent kill itself with SIGKILL at that point, exactly
like a `kill -9` landing there. Several names may be given, comma-separated.
"""

from __future__ import annotations

import os
import signal

FAULT_ENV = "PM_AGENT_FAULT"
FAULT_POINTS = (
    "after-signal",  # a session ended with a stored signal, before the task moved on
    "after-gates",  # gate results stored, before the transition
    "after-task-commit",  # the task branch has the commit, the store does not know
    "after-integrate",  # the working branch moved, the store does not know
    "after-commit-recorded",  # the store has the commit, the task is not yet COMPLETED
)


def fault_point(name: str) -> None:
    """Die here, now, if the environment asks for this fault point."""
    wanted = os.environ.get(FAULT_ENV, "")
    if wanted and name in {w.strip() for w in wanted.split(",")}:
        os.kill(os.getpid(), signal.SIGKILL)
