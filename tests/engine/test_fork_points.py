"""`ForkPoints.merge_base` answers what `git merge-base` answers, asking git only when it cannot tell."""

from __future__ import annotations

from pathlib import Path

from pm_agent.engine.runctx import ForkPoints
from pm_agent.errors import VcsError
from pm_agent.vcs import Git

WORK = "pm/p/work"
TASK = "refs/heads/feat/p/task-1"


def _commit(git: Git, name: str, branch: str) -> str:
    git.run("checkout", "-q", branch)
    (git.path / name).write_text(name + "\n")
    git.run("add", "-A")
    git.run("commit", "-q", "--no-verify", "-m", name)
    return git.head_sha()


def _same(fork: ForkPoints, git: Git) -> str:
    """The answer, checked against git's (an error on both sides when there is no merge base)."""
    try:
        expected = git.run("merge-base", WORK, TASK).strip()
    except VcsError:
        expected = "error"
    try:
        found = fork.merge_base(git, WORK, TASK)
    except VcsError:
        found = "error"
    assert found == expected
    return found


def test_a_task_branch_at_an_earlier_tip_is_its_own_fork_point(git_repo: Path) -> None:
    git = Git(git_repo)
    start = git.head_sha()
    git.run("branch", WORK)
    git.run("branch", TASK.removeprefix("refs/heads/"))
    fork = ForkPoints()
    assert _same(fork, git) == start
    assert _same(fork, git) == start
    for n in range(3):  # other tasks land: the working branch moves forward, by pm-agent
        before = git.rev_parse(WORK)
        fork.landed(before, _commit(git, f"other{n}.py", WORK))
        assert _same(fork, git) == start


def test_what_pm_agent_cannot_vouch_for_is_asked_of_git(git_repo: Path) -> None:
    git = Git(git_repo)
    start = git.head_sha()
    git.run("branch", WORK)
    git.run("branch", TASK.removeprefix("refs/heads/"))
    fork = ForkPoints()
    _same(fork, git)
    landed = _commit(git, "landed.py", WORK)
    fork.landed(start, landed)
    # The working branch rewritten behind pm-agent's back, to a history without the task's fork point.
    git.run("checkout", "-q", "--orphan", "elsewhere")
    (git.path / "orphan.py").write_text("orphan\n")
    git.run("add", "-A")
    git.run("commit", "-q", "--no-verify", "-m", "orphan")
    orphan = git.head_sha()
    git.run("checkout", "-q", "-f", "main")
    git.run("update-ref", f"refs/heads/{WORK}", orphan)
    assert _same(fork, git) == "error"
    git.run("update-ref", f"refs/heads/{WORK}", landed)  # put back: known again only through git
    assert _same(fork, git) == start
    # The agent committed on the task branch: its tip is no earlier tip of the working branch.
    _commit(git, "agent.py", TASK.removeprefix("refs/heads/"))
    assert _same(fork, git) == start


def test_a_landing_from_a_tip_never_seen_vouches_only_for_itself(git_repo: Path) -> None:
    git = Git(git_repo)
    git.run("branch", WORK)
    git.run("branch", TASK.removeprefix("refs/heads/"))
    fork = ForkPoints()
    _same(fork, git)
    # The working branch rewritten to an unrelated history, unseen; then pm-agent lands a task on top of it.
    git.run("checkout", "-q", "--orphan", "elsewhere")
    git.run("commit", "-q", "--no-verify", "-m", "orphan")
    orphan = git.head_sha()
    git.run("update-ref", f"refs/heads/{WORK}", orphan)
    fork.landed(orphan, _commit(git, "side.py", WORK))
    assert _same(fork, git) == "error"
