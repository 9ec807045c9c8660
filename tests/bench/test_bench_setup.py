"""bench/bench_setup.py measures what it says: a repository of n files, the engine's worktree, the real prompt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pm_agent.engine.loop import PmLoop
from pm_agent.plan import load_plan
from pm_agent.vcs import Git

# bench/ is not a package: its modules import each other by plain name
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_setup import FOLDERS, PLAN_PATH, _setup, _start, make_repo, measure, plan_text


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def test_make_repo_commits_exactly_n_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, 250)
    tracked = git(repo, "ls-files").splitlines()
    assert len(tracked) == 250
    assert PLAN_PATH in tracked
    assert "src/pkg7/mod247.py" in tracked  # module i in folder i % FOLDERS
    assert len({path.split("/")[1] for path in tracked if path.startswith("src/")}) == FOLDERS  # at every size
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "--format=%s") == "generated\n"


def test_plan_is_six_chained_tasks_on_files_every_repo_has(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, 100)
    plan = load_plan(repo / PLAN_PATH, None, repo)
    assert [t.title for t in plan.tasks][:2] == ["CSV export", "Monthly totals"]
    assert len(plan.tasks) == 6
    for prev, task in zip(plan.tasks, plan.tasks[1:], strict=False):
        assert task.dependency_ids() == [prev.id]
    for task in plan.tasks:
        assert all((repo / p).is_file() for p in task.expected_files.modify)
        assert len(task.acceptance_criteria) == 3
    assert plan_text() == (repo / PLAN_PATH).read_text(encoding="utf-8")


def test_setup_is_the_task_worktree_from_the_working_branch_and_the_developer_prompt(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, 100)
    rc = _start(repo)
    try:
        rec = rc.store.list_tasks(rc.run_id)[1]
        prompt = _setup(PmLoop(rc), rc, rec)
        worktree = Git(rc.worktree_path(rec.task_id))
        assert worktree.current_branch() == rc.task_branch_of(rec)
        assert worktree.head_sha() == Git(repo).rev_parse(rc.run.working_branch)
        assert len(git(worktree.path, "ls-files").splitlines()) == 100  # a full checkout
        assert "task_contract:" in prompt
        assert "Monthly totals" in prompt
        assert "Errors name the input line that caused them" in prompt
        assert "task-1 (CSV export)" in prompt  # its dependency, from the store
    finally:
        rc.store.close()


def test_measure_gives_every_figure_and_removes_the_task_worktrees(tmp_path: Path) -> None:
    result = measure(tmp_path, 100)
    assert set(result) == {"prompt", "setup", "new", "taken", "retire", "remove", "sparse"}
    assert result["prompt"] > 2000
    assert all(value > 0 for value in result.values())
    repo = tmp_path / "repo-00100"
    paths = [str(info.path) for info in Git(repo).worktree_list()]
    assert not [p for p in paths if "/.pm-agent/worktrees/" in p]  # the engine's task worktrees are gone
    assert len([p for p in paths if "/bench-sparse/" in p]) == 5
    sparse = repo / ".pm-agent" / "bench-sparse" / "task-1"
    assert (sparse / "src" / "pkg7" / "mod7.py").is_file()  # the task's folder is there
    assert (sparse / "README.md").is_file()  # cone mode keeps the top folder's files
    assert not (sparse / PLAN_PATH).exists()  # and nothing outside the task's folders
