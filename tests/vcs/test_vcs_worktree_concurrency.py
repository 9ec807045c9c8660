"""Slots create and remove worktrees at the same time: git's metadata must never be read half-written."""

from __future__ import annotations

import threading
from pathlib import Path

from pm_agent.testing.repo import init_repo
from pm_agent.vcs import Git, integrate

SLOTS = 6
ROUNDS = 15


def test_worktrees_added_and_removed_from_several_slots_at_once(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    errors: list[str] = []
    start = threading.Barrier(SLOTS)

    def slot(n: int) -> None:
        git = Git(repo)  # one handle per slot, as the engine's threads have
        start.wait()
        for i in range(ROUNDS):
            branch = f"pm/t{n}-{i}"
            try:
                wt = git.worktree_add(tmp_path / f"wt-{n}-{i}", branch, start="main")
                (wt.path / "f.txt").write_text(f"{n} {i}\n")
                assert any(info.branch == branch for info in git.worktree_list())
                git.worktree_remove(wt.path, force=True)
                git.delete_branch(branch)
            except Exception as exc:  # collected: a failure in a thread would otherwise be lost
                errors.append(f"slot {n} round {i}: {exc}")

    # Meanwhile, the question an integration asks, read without the lock: never a wrong answer.
    held = Git(repo).worktree_add(tmp_path / "held", "pm/held", start="main")
    done = threading.Event()

    def ask() -> None:
        git = Git(repo)
        while not done.is_set():
            try:
                holder = git.branch_holder("pm/held")
                assert holder is not None
                assert Path(holder.path) == held.path
                assert git.branch_holder("pm/nobody") is None
            except Exception as exc:
                errors.append(f"branch_holder: {exc!r}")
                return

    threads = [threading.Thread(target=slot, args=(n,)) for n in range(SLOTS)]
    asker = threading.Thread(target=ask)
    asker.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    done.set()
    asker.join(timeout=60)
    assert not any(t.is_alive() for t in [*threads, asker])
    assert errors == []
    git = Git(repo)
    git.worktree_remove(held.path, force=True)
    git.delete_branch("pm/held")
    assert [info.path for info in git.worktree_list()] == [str(repo.resolve())]
    assert git.run("branch", "--list", "pm/*").strip() == ""


def test_integration_scratch_worktrees_beside_slot_worktrees(tmp_path: Path) -> None:
    """`integrate` adds and prunes a scratch worktree while slots add theirs: neither may fail."""
    repo = init_repo(tmp_path / "repo")
    git = Git(repo)
    git.create_branch("work", "main")
    for n in range(4):
        wt = git.worktree_add(tmp_path / f"task-{n}", f"pm/task-{n}", start="main")
        (wt.path / f"t{n}.txt").write_text("x\n")
        wt.run("add", "-A")
        wt.run("commit", "-q", "--no-verify", "-m", f"task {n}")
    errors: list[str] = []

    def integrate_all() -> None:
        for n in range(4):
            try:
                result = integrate(git, f"pm/task-{n}", "work")
                assert result.status in ("fast-forward", "cherry-picked"), result.message
            except Exception as exc:
                errors.append(f"integrate {n}: {exc}")

    def churn(n: int) -> None:
        for i in range(ROUNDS):
            try:
                wt = git.worktree_add(tmp_path / f"churn-{n}-{i}", f"pm/churn-{n}-{i}", start="main")
                git.worktree_remove(wt.path, force=True)
            except Exception as exc:
                errors.append(f"churn {i}: {exc}")

    threads = [threading.Thread(target=integrate_all), *(threading.Thread(target=churn, args=(n,)) for n in range(2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert errors == []
    files = sorted(git.run("ls-tree", "--name-only", "work").split())
    assert files == ["README.md", "t0.txt", "t1.txt", "t2.txt", "t3.txt"]
