"""Triage: is each task already done in the repository? EXISTS / PARTIAL / MISSING, with the reason."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.listing import few
from pm_agent.plan.models import Presence, Task

GIT_TIMEOUT_S = 30.0


@dataclass
class RepoView:
    """What triage knows about a repository: its files on disk and, for a git work tree, the tracked ones."""

    root: Path | None
    is_git: bool = False
    tracked: frozenset[str] = frozenset()
    note: str = ""  # why git facts are unavailable, when they are
    _history: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def open(cls, repo: Path | None) -> RepoView:
        """Look at `repo` once; never raises for a folder that is not a git work tree."""
        if repo is None:
            return cls(root=None, note="no repository")
        root = Path(repo)
        out = _git(root, "rev-parse", "--is-inside-work-tree")
        if out is None or out.strip() != "true":
            return cls(root=root, note="not a git repository")
        listing = _git(root, "ls-files", "-z") or ""
        tracked = frozenset(p for p in listing.split("\0") if p)
        return cls(root=root, is_git=True, tracked=tracked)

    def present(self, path: str) -> bool:
        """On disk, and tracked when the repository is a git work tree."""
        if self.root is None or not (self.root / path).exists():
            return False
        return not self.is_git or path in self.tracked or _tracked_dir(self.tracked, path)

    def on_disk_untracked(self, path: str) -> bool:
        on_disk = self.root is not None and (self.root / path).exists()
        return on_disk and self.is_git and not self.present(path)

    def commit_for(self, task_id: str) -> str | None:
        """`<sha> <subject>` of the newest commit with the trailer `Refs: task-<id>`, else None."""
        if not self.is_git or self.root is None:
            return None
        if task_id not in self._history:
            pattern = rf"^Refs:[[:space:]]*task-{re.escape(task_id)}[[:space:]]*$"
            out = _git(self.root, "log", "-E", f"--grep={pattern}", "--format=%h %s", "-n", "1")
            self._history[task_id] = (out.strip() or None) if out else None
        return self._history[task_id]


def _tracked_dir(tracked: frozenset[str], path: str) -> bool:
    prefix = path.rstrip("/") + "/"
    return any(p.startswith(prefix) for p in tracked)


def _git(root: Path, *args: str) -> str | None:
    """stdout of a git command in `root`, or None when git is missing, fails or times out."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def triage_task(task: Task, view: RepoView) -> tuple[Presence, str]:
    """The presence of one task and why."""
    if view.root is None:
        return Presence.MISSING, view.note
    files = task.expected_files
    made = list(dict.fromkeys([*files.create, *files.test]))
    if not made and not files.delete:
        return _by_history(task, view)
    done: list[str] = []
    todo: list[str] = []
    for path in made:
        (done if view.present(path) else todo).append(path)
    for path in files.delete:
        (todo if (view.root / path).exists() else done).append(path)
    untracked = [p for p in made if view.on_disk_untracked(p)]
    detail = f" ({', '.join(untracked)} on disk but not tracked by git)" if untracked else ""
    total = len(done) + len(todo)
    if not todo:
        return Presence.EXISTS, f"all {total} expected file changes are in place{detail}"
    missing = f"missing {few(todo, 3)}{detail}"
    if not done:
        return Presence.MISSING, f"none of {total} expected file changes are in place; {missing}"
    return Presence.PARTIAL, f"{len(done)} of {total} expected file changes are in place; {missing}"


def _by_history(task: Task, view: RepoView) -> tuple[Presence, str]:
    if not view.is_git:
        return Presence.MISSING, f"{view.note}: cannot look for a commit with 'Refs: {task.ref}'"
    commit = view.commit_for(task.id)
    if commit is not None:
        return Presence.EXISTS, f"commit {commit} carries 'Refs: {task.ref}'"
    return Presence.MISSING, f"creates or deletes no file and no commit carries 'Refs: {task.ref}'"


def planned_tests(task: Task, view: RepoView) -> tuple[list[str], list[str]]:
    """(tests_to_add, tests_to_run): `Test:` files join tests_to_run, and tests_to_add when not in the repo yet."""
    to_add = list(task.tests_to_add)
    to_run = list(task.tests_to_run)
    for path in task.expected_files.test:
        if not view.present(path) and path not in to_add:
            to_add.append(path)
        if path not in to_run:
            to_run.append(path)
    return to_add, to_run


def assign_tests(task: Task, view: RepoView) -> Task:
    """`Test:` files go to tests_to_run, and to tests_to_add when they do not exist in the repository yet."""
    to_add, to_run = planned_tests(task, view)
    return task.model_copy(update={"tests_to_add": to_add, "tests_to_run": to_run})


def triage_update(task: Task, view: RepoView) -> tuple[dict[str, object], str]:
    """What `triage` changes in one task (presence, its reason, the test lists) and the line it logs."""
    presence, reason = triage_task(task, view)
    to_add, to_run = planned_tests(task, view)
    update: dict[str, object] = {
        "presence": presence,
        "presence_reason": reason,
        "tests_to_add": to_add,
        "tests_to_run": to_run,
    }
    return update, f"triage {presence.value}: {reason}"


def triage(tasks: Sequence[Task], repo: Path | None) -> list[Task]:
    """Copies of the tasks with presence, presence_reason and test lists set; repo None -> all MISSING."""
    view = RepoView.open(repo)
    result: list[Task] = []
    for task in tasks:
        update, line = triage_update(task, view)
        result.append(task.model_copy(update={**update, "decision_log": [*task.decision_log, line]}))
    return result
