"""A finished task's worktree is retired and the next new task takes it over (issue 11, `vcs.pool`): the agent
finds what a new worktree would give it, and the run ends with no worktree left. Real Claude Code CLI, one slot.

Task 2's agent starts as task 1's ends (a slot is an agent's, engine/agentslots.py) and finishes only once
task 1 is completed, so task 1's worktree is retired before task 3 is dispatched, whatever the machine's speed."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.agents.header import SessionHeader
from pm_agent.store import default_store_path, open_store
from pm_agent.testing.model_server import ModelRequest, Turn
from pm_agent.testing.team import Step, signal, write
from pm_agent.vcs.pool import WorktreePool

from .conftest import Target, git

pytestmark = pytest.mark.claude

PLAN = "# notes\n\n**Goal:** three notes.\n\n" + "\n".join(
    f"""### Task {n}: Write the {name} note

**Tier:** low
**Ownership:** docs-{name}

**Files:**
- Create: `docs/{name}.md`

**Acceptance criteria:**
- docs/{name}.md describes {name}
"""
    for n, name in enumerate(("usage", "history", "roadmap"), start=1)
)


def _note(name: str) -> list[Step]:
    path = f"docs/{name}.md"
    return [
        write(path, f"About {name}.\n"),
        signal(
            {
                "signal": "complete",
                "summary": f"wrote {path}",
                "filesCreated": [path],
                "criteriaMapping": [{"criterion": f"{path} describes {name}", "location": f"{path}:1"}],
                "reviewNote": {"summary": "a note", "risks": [], "rollback": "revert the commit"},
            }
        ),
    ]


@pytest.mark.parametrize("reuse", [True, False])
def test_the_third_task_works_in_the_first_tasks_worktree_as_if_it_were_new(
    target: Callable[[str], Target], reuse: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = target(PLAN)
    found: dict[str, object] = {}

    def look(s: SessionHeader, r: ModelRequest) -> Turn:
        """Before task 3's agent does anything: which worktree it is in, and what is in it."""
        found["gitdir"] = (s.workdir / ".git").read_text(encoding="utf-8")
        found["status"] = git(s.workdir, "status", "--porcelain", "--ignored", "--untracked-files=all")
        found["files"] = sorted(str(p.relative_to(s.workdir)) for p in s.workdir.rglob("*") if ".git" not in p.parts)
        found["branch"] = git(s.workdir, "branch", "--show-current").strip()
        found["head"] = git(s.workdir, "rev-parse", "HEAD").strip()
        return write("docs/roadmap.md", "About roadmap.\n")(s, r)

    run: dict[str, str] = {}

    def after_task_1(s: SessionHeader, r: ModelRequest) -> Turn:
        """Task 2's first turn, once task 1 is completed (bounded: the loop fails the test if it never is)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            store = open_store(default_store_path(t.repo))
            try:
                if store.get_task(run["id"], "1").state == "completed":
                    break
            finally:
                store.close()
            time.sleep(0.1)
        return write("docs/history.md", "About history.\n")(s, r)

    # Task 1 leaves an ignored file behind (never committed): a new worktree would not have it.
    stale = write("src/calc/__pycache__/stale.pyc", "stale")
    t.team.scripts = {
        ("task-1", "developer"): [stale, *_note("usage")],
        ("task-2", "developer"): [after_task_1, *_note("history")[1:]],
        ("task-3", "developer"): [look, *_note("roadmap")[1:]],
    }
    retired: list[tuple[str, bool]] = []
    original = WorktreePool.retire

    def spy(self: WorktreePool, path: Path, branch: str, *, keep_branch: bool = False, spare: bool = True) -> None:
        retired.append((path.name, spare))
        original(self, path, branch, keep_branch=keep_branch, spare=spare)

    monkeypatch.setattr(WorktreePool, "retire", spy)
    rc = t.start(max_parallel_agents=1, reuse_worktrees=reuse, progress_report_task_interval=1)
    run["id"] = rc.run_id
    outcome = t.drive(rc)
    assert outcome.all_done, (outcome, t.listener.events[-10:])
    # A progress report is due after each task: task 2 was dispatched as task 1's agent ended, before task 1's
    # report; the loop refills a slot first, then writes the report due.
    kinds = t.listener.kinds()
    reports = [i for i, kind in enumerate(kinds) if kind == "report.progress"]
    dispatches = [i for i, kind in enumerate(kinds) if kind == "slots"]
    assert len(reports) == 3, kinds
    assert dispatches[1] < reports[0] < dispatches[2] < reports[1], kinds

    # Task 3 started in the worktree git first made for task 1: retired after task 2's dispatch, taken over after.
    made_for = "task-1" if reuse else "task-3"  # reuse_worktrees: false gives every task a new one
    assert str(found["gitdir"]).strip().endswith(f"/worktrees/{made_for}"), found["gitdir"]
    assert found["branch"] == rc.task_branch_of(rc.store.get_task(rc.run_id, "3"))
    commits = t.log(rc.run.working_branch)
    # Task 3 started from task 1's landing: task 2 was still in pm-agent's checks when its agent gave the slot back.
    assert found["head"] == git(t.repo, "rev-parse", f"{rc.run.working_branch}~2").strip()
    assert found["status"] == ""  # nothing changed, untracked or ignored: no trace of task 1's stale file
    assert "docs/usage.md" in found["files"]
    assert "docs/history.md" not in found["files"]
    assert not any("__pycache__" in str(f) for f in found["files"])  # type: ignore[union-attr]
    assert len(commits) == 4
    assert "roadmap" in commits[0]
    # Task 1's worktree is kept for task 3; when task 2 and task 3 finish no task is left to take one: removed.
    assert retired == [("task-1", True), ("task-2", False), ("task-3", False)]
    # Nothing is left: no task worktree, no spare.
    assert [w.path for w in rc.git.worktree_list()] == [str(t.repo)]
    assert list(rc.worktree_path("1").parent.iterdir()) == []
