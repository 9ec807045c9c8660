"""WorktreePool: a finished task's worktree, retired and taken over, is what `worktree add` would have given."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.vcs import Git, _batch
from pm_agent.vcs.pool import SPARE_PREFIX, WorktreePool

Write = Callable[[Path, str, str], Path]
Commit = Callable[[Git, str], str]


def _files(root: Path) -> set[str]:
    """Every file and folder under `root` but `.git`, as relative paths."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        rel = Path(folder).relative_to(root)
        found.update(str(rel / name) for name in [*dirs, *files])
    return {f.removeprefix("./") for f in found}


def _branches(git: Git) -> set[str]:
    return set(git.run("for-each-ref", "--format=%(refname:short)", "refs/heads/").split())


def _worktrees(git: Git) -> dict[str, str | None]:
    return {Path(w.path).name: w.branch for w in git.worktree_list()}


@pytest.fixture
def pool(repo: Git, tmp_path: Path) -> WorktreePool:
    folder = tmp_path / "run"
    folder.mkdir()
    return WorktreePool(repo, folder, limit=2)


def _finished_task(pool: WorktreePool, write: Write, name: str = "task-1") -> Path:
    """A task's worktree as a finished task leaves it: its commit, then edits, untracked and ignored files."""
    wt, fresh = pool.ensure(pool.folder / name, f"feat/demo/{name}", "pm/demo/work")
    assert fresh
    write(wt.path, ".gitignore", "build/\n")
    write(wt.path, "feature.py", "X = 1\n")
    wt.commit_all(f"feat: {name}\n\nRefs: {name}\n")
    write(wt.path, "app.py", "edited after the commit\n")  # a tracked file changed
    write(wt.path, "notes/scratch.txt", "untracked\n")
    write(wt.path, "build/out.bin", "ignored\n")
    (wt.path / "README.md").unlink()  # a tracked file deleted
    return wt.path


def _one_spare(pool: WorktreePool, write: Write) -> Path:
    """Task 1 finished and retired: the pool's one spare."""
    pool.retire(_finished_task(pool, write), "feat/demo/task-1")
    (spare,) = pool.spares()
    return spare


def test_a_taken_over_worktree_is_what_worktree_add_gives(
    repo: Git, pool: WorktreePool, tmp_path: Path, write: Write, commit: Commit
) -> None:
    done = _finished_task(pool, write)
    pool.retire(done, "feat/demo/task-1")
    assert not done.exists()
    assert len(pool.spares()) == 1
    assert pool.retired == 1
    assert "feat/demo/task-1" not in _branches(repo)  # its branch goes, as before

    # The working branch moves on meanwhile (another task landed): the next task starts there.
    write(repo.path, "landed.py", "Y = 2\n")
    repo.run("checkout", "-q", "pm/demo/work")
    start = commit(repo, "another task")
    repo.run("checkout", "-q", "main")

    target = pool.folder / "task-2"
    taken, fresh = pool.ensure(target, "feat/demo/task-2", "pm/demo/work")
    assert fresh
    assert pool.taken == 1
    assert pool.spares() == []
    assert taken.path == target.resolve()
    added = repo.worktree_add(tmp_path / "added", "feat/demo/other", start)  # what `worktree add` gives

    assert taken.current_branch() == "feat/demo/task-2"
    assert taken.head_sha() == start
    assert taken.status_porcelain() == []
    assert _files(taken.path) == _files(added.path)
    assert (taken.path / "app.py").read_text() == (added.path / "app.py").read_text()
    assert _worktrees(repo)["task-2"] == "feat/demo/task-2"
    assert not any(name.startswith(SPARE_PREFIX) for name in _worktrees(repo))


def test_keep_branch_keeps_the_branch_of_a_retired_worktree(repo: Git, pool: WorktreePool, write: Write) -> None:
    done = _finished_task(pool, write)
    tip = repo.rev_parse("feat/demo/task-1")
    pool.retire(done, "feat/demo/task-1", keep_branch=True)
    assert repo.rev_parse("feat/demo/task-1") == tip
    assert len(pool.spares()) == 1


def test_beyond_the_limit_a_finished_worktree_is_removed(repo: Git, pool: WorktreePool, write: Write) -> None:
    paths = [_finished_task(pool, write, f"task-{n}") for n in (1, 2, 3)]
    for n, path in enumerate(paths, start=1):
        pool.retire(path, f"feat/demo/task-{n}")
    assert len(pool.spares()) == pool.limit == 2
    assert not any(p.exists() for p in paths)
    assert sorted(_worktrees(repo)) == sorted(["repo", *(p.name for p in pool.spares())])
    assert not any(b.startswith("feat/") for b in _branches(repo))


def test_without_a_spare_or_for_a_branch_that_exists_a_worktree_is_added(
    repo: Git, pool: WorktreePool, write: Write
) -> None:
    first, fresh = pool.ensure(pool.folder / "task-1", "feat/demo/task-1", "pm/demo/work")
    assert fresh
    assert pool.taken == 0
    pool.retire(first.path, "feat/demo/task-1")
    repo.run("branch", "feat/demo/task-9", "pm/demo/work")  # a task back after a stop: its branch is there
    again, fresh = pool.ensure(pool.folder / "task-9", "feat/demo/task-9", "pm/demo/work")
    assert not fresh
    assert pool.taken == 0
    assert len(pool.spares()) == 1
    assert again.current_branch() == "feat/demo/task-9"


def test_a_spare_a_stopped_run_left_is_swept_and_frees_the_branch_in_it(
    repo: Git, pool: WorktreePool, write: Write
) -> None:
    spare = _one_spare(pool, write)
    # Killed between the take-over's two steps: the spare has the new task's branch checked out, unmoved.
    repo._at(spare).run("checkout", "-q", "-b", "feat/demo/task-2", "pm/demo/work")

    after = WorktreePool(repo, pool.folder, limit=2)  # the next run's pool
    assert after.sweep() == 1
    assert not spare.exists()
    assert set(_worktrees(repo)) == {"repo"}
    wt, fresh = after.ensure(pool.folder / "task-2", "feat/demo/task-2", "pm/demo/work")
    assert not fresh
    assert wt.current_branch() == "feat/demo/task-2"
    after.retire(wt.path, "feat/demo/task-2")
    assert after.sweep() == 0
    assert all(s.exists() for s in after.spares())
    assert len(after.spares()) == 1


def test_close_removes_every_spare(repo: Git, pool: WorktreePool, write: Write) -> None:
    paths = [_finished_task(pool, write, f"task-{n}") for n in (1, 2)]
    for n, path in enumerate(paths, start=1):
        pool.retire(path, f"feat/demo/task-{n}")
    spares = pool.spares()
    assert len(spares) == 2
    pool.close()
    assert pool.spares() == []
    assert not any(s.exists() for s in spares)
    assert set(_worktrees(repo)) == {"repo"}


def test_a_move_git_refuses_turns_the_pool_off_and_nothing_is_lost(repo: Git, pool: WorktreePool, write: Write) -> None:
    spare = _one_spare(pool, write)
    repo.run("worktree", "lock", str(spare))  # git refuses to move a locked worktree
    target = pool.folder / "task-2"
    wt, fresh = pool.ensure(target, "feat/demo/task-2", "pm/demo/work")
    assert fresh
    assert pool.taken == 0
    assert not pool.enabled
    assert wt.path == target.resolve()
    assert wt.current_branch() == "feat/demo/task-2"
    assert not spare.exists()  # the spare that could not move is gone, not leaked
    assert set(_worktrees(repo)) == {"repo", "task-2"}
    # Off for the rest of the run: a finished worktree is removed again.
    pool.retire(wt.path, "feat/demo/task-2")
    assert pool.spares() == []
    assert not target.exists()


def test_a_failed_checkout_leaves_no_branch_and_the_task_still_gets_its_worktree(
    repo: Git, pool: WorktreePool, write: Write
) -> None:
    spare = _one_spare(pool, write)
    # The checkout cannot take the spare's index (a git process left its lock behind).
    admin = Path((spare / ".git").read_text().removeprefix("gitdir: ").strip())
    (admin / "index.lock").write_text("")
    repo.run("checkout", "-q", "pm/demo/work")
    write(repo.path, "landed.py", "Y = 2\n")
    repo.run("add", "-A")
    repo.run("commit", "-q", "-m", "landed")
    repo.run("checkout", "-q", "main")
    wt, fresh = pool.ensure(pool.folder / "task-2", "feat/demo/task-2", "pm/demo/work")
    assert fresh
    assert pool.taken == 0
    assert pool.enabled
    assert (wt.path / "landed.py").read_text() == "Y = 2\n"
    assert not spare.exists()


def test_a_worktree_no_task_will_take_is_removed_not_kept(repo: Git, pool: WorktreePool, write: Write) -> None:
    done = _finished_task(pool, write)
    pool.retire(done, "feat/demo/task-1", spare=False)
    assert pool.spares() == []
    assert not done.exists()
    assert set(_worktrees(repo)) == {"repo"}
    assert "feat/demo/task-1" not in _branches(repo)


def test_a_worktree_git_is_working_in_is_removed_not_kept(repo: Git, pool: WorktreePool, write: Write) -> None:
    """Its HEAD is locked (a git process there): it is not detached under that process, nor kept as a spare."""
    done = _finished_task(pool, write)
    admin = Path((done / ".git").read_text().removeprefix("gitdir: ").strip())
    (admin / "HEAD.lock").write_text("")
    pool.retire(done, "feat/demo/task-1")
    assert pool.spares() == []
    assert not done.exists()
    assert set(_worktrees(repo)) == {"repo"}
    assert "feat/demo/task-1" not in _branches(repo)


def test_a_retired_worktree_is_detached_where_its_branch_was(repo: Git, pool: WorktreePool, write: Write) -> None:
    done = _finished_task(pool, write)
    tip = repo.rev_parse("feat/demo/task-1")
    pool.retire(done, "feat/demo/task-1")
    (spare,) = pool.spares()
    assert Git(spare).head_sha() == tip
    assert Git(spare).current_branch() is None
    assert _worktrees(repo)[spare.name] is None


def test_a_worktree_s_batch_process_moves_with_it_and_answers_for_the_next_task(
    repo: Git, pool: WorktreePool, write: Write, commit: Commit
) -> None:
    done = _finished_task(pool, write)
    Git(done).head_sha()  # the worktree's `cat-file` batch process, started
    first = _batch._OPEN[done.resolve()]
    pool.retire(done, "feat/demo/task-1")
    (spare,) = pool.spares()
    assert _batch._OPEN[spare.resolve()] is first
    repo.run("checkout", "-q", "pm/demo/work")
    write(repo.path, "landed.py", "Y = 2\n")
    start = commit(repo, "another task")
    repo.run("checkout", "-q", "main")
    taken, _ = pool.ensure(pool.folder / "task-2", "feat/demo/task-2", "pm/demo/work")
    assert _batch._OPEN[taken.path] is first
    assert done.resolve() not in _batch._OPEN
    assert spare.resolve() not in _batch._OPEN
    assert taken.head_sha() == start  # through the same process, which reads HEAD afresh
    assert taken.rev_parse("feat/demo/task-2") == start
    assert _batch._OPEN[taken.path] is first
