"""Where a repository's state file lives, and how a task's history reads as text: stdlib only.

The store (`pm_agent.store`, which imports SQLAlchemy, pydantic and the plan models: about a second) and the
read-only commands (`pm-agent status` and `log`, which read the file with sqlite3 to stay fast) both use these,
so the path and the words of `pm-agent log` have one definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

STATE_DIR = ".pm-agent"
STATE_FILE = "state.db"

# Events that only mirror a row shown from its own table: `log` leaves them out so each happening appears once.
MIRRORED_EVENTS = frozenset({"task.transition", "session.created", "signal.recorded", "gate.recorded"})
# Order of history entries recorded in the same instant.
HISTORY_RANK = {"transition": 0, "session": 1, "signal": 2, "gate": 3, "event": 4}


# ESLint's legacy configuration (`.eslintrc*`) merges every config up the folders until one says `root: true`, so a
# worktree under `.pm-agent/` inside the repository also merges the main checkout's config, and with an install of
# its own (Yarn 2+, a pnpm workspace) two copies of a plugin clash ("ESLint couldn't determine the plugin ...
# uniquely": redux-thunk's lint in a worktree). An empty config that says `root` ends the search at pm-agent's
# folder and adds no rule; the worktree's own config, found first, is the one that counts.
_ESLINT_STOP = ".eslintrc.json"


def mark_state_dir(state_dir: Path) -> Path | None:
    """Create `state_dir` with what keeps tools run in worktrees under it from reading the main checkout's settings;
    the file made, None when it was there."""
    state_dir.mkdir(parents=True, exist_ok=True)
    stop = state_dir / _ESLINT_STOP
    if stop.exists():
        return None
    stop.write_text('{"root": true}\n', encoding="utf-8")
    return stop


def default_store_path(repo: Path) -> Path:
    """Where a repository's state lives: `<repo>/.pm-agent/state.db`."""
    return repo / STATE_DIR / STATE_FILE


def transition_summary(from_state: str, to_state: str, reason: str, iteration: int) -> str:
    """`received -> planning_approach: why (iteration 2)`."""
    return f"{from_state} -> {to_state}: {reason}" + (f" (iteration {iteration})" if iteration else "")


def session_summary(session_id: int, role: str, attempt: int, runner: str, resumed_from: int | None) -> str:
    """`session 3: developer attempt 1 via claude[, resuming session 2]`."""
    summary = f"session {session_id}: {role} attempt {attempt} via {runner}"
    return summary + (f", resuming session {resumed_from}" if resumed_from is not None else "")


def signal_summary(kind: str, session_id: int | None, attempt: int, seq: int, accepted: bool, reason: str) -> str:
    """`complete from session 3 (attempt 1, seq 1) accepted` (or `refused: why`)."""
    verdict = "accepted" if accepted else f"refused: {reason}"
    return f"{kind} from session {session_id} (attempt {attempt}, seq {seq}) {verdict}"


def gate_summary(gate: str, passed: bool, attempt: int) -> str:
    """`gate tests PASS (attempt 1)`."""
    return f"gate {gate} {'PASS' if passed else 'FAIL'} (attempt {attempt})"


def event_summary(payload: Mapping[str, Any]) -> str:
    """A free-form event's payload as `key=value, ...`, keys sorted."""
    return ", ".join(f"{k}={v}" for k, v in sorted(payload.items()))
