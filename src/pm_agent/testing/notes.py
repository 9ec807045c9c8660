"""Plans of LOW "note" tasks played by the fake agent: each task writes `notes/n<N>.md` and signals complete.

`pm-agent run` tests and the loop benchmark use them with `fake_launcher`, which stands in for Claude
Code through `agent.binary`; each task's script is named in its steps, which reach the agent in its prompt.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from pm_agent.testing import fake_agent
from pm_agent.testing.fake_agent import script_marker


def fake_launcher(path: Path) -> Path:
    """An executable at `path` that runs the fake agent with this Python (for `agent.binary`).

    By path with `-I -S`, as the signal relay runs: the fake needs only the standard library, and a process per
    session that skips site-packages and pm_agent's package imports leaves the CPU to what is measured."""
    command = shlex.join([sys.executable, "-I", "-S", str(Path(fake_agent.__file__).resolve())])
    path.write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def note_section(number: int, script: Path) -> str:
    """The plan section of note task `number`, whose agent plays `script`."""
    return f"""\
### Task {number}: Note {number}

**Tier:** low

**Files:**
- Create: `notes/n{number}.md`

**Acceptance criteria:**
- notes/n{number}.md holds note {number}

**Steps:**
- play {script_marker(script)}
"""


def note_script(number: int, *, wait_for: Path | None = None) -> dict[str, object]:
    """Write the note and signal complete; first, when given, say so in `<wait_for>.waiting` and wait for `wait_for`."""
    steps: list[dict[str, object]] = []
    if wait_for is not None:
        steps.append({"bash": f"touch {wait_for}.waiting; while [ ! -e {wait_for} ]; do sleep 0.1; done; echo go"})
    steps += [
        {"write": f"notes/n{number}.md", "content": f"note {number}\n"},
        {
            "signal": {
                "signal": "complete",
                "stepId": f"task-{number}",
                "summary": f"wrote note {number}",
                "filesCreated": [f"notes/n{number}.md"],
                "criteriaMapping": [
                    {"criterion": f"notes/n{number}.md holds note {number}", "location": f"notes/n{number}.md:1"}
                ],
                "reviewNote": {"summary": "one note", "risks": [], "rollback": "revert the commit"},
            }
        },
    ]
    return {"steps": steps}
