"""Triage against real git repositories made in tmp_path: EXISTS / PARTIAL / MISSING and why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pm_agent.plan import ExpectedFiles, Presence, Task, load_plan
from pm_agent.plan.triage import triage

Git = Callable[..., str]
Write = Callable[..., Path]

PLAN = """\
# Shop plan

## Task 1: Catalogue

**Files:**
- Create: `src/shop/catalogue.py`
- Test: `tests/test_catalogue.py`

## Task 2: Cart

**Files:**
- Create: `src/shop/cart.py`
- Create: `src/shop/prices.py`
- Test: `tests/test_cart.py`

## Task 3: Checkout

**Files:**
- Create: `src/shop/checkout.py`

## Task 4: Cart totals

**Files:**
- Modify: `src/shop/cart.py:10-20`

## Task 5: Catalogue search

**Files:**
- Modify: `src/shop/catalogue.py`

## Task 6: Drop the legacy module

**Files:**
- Delete: `src/shop/legacy.py`
"""


def make_repo(repo: Path, git: Git, write: Write) -> Path:
    for path in (
        "src/shop/catalogue.py",
        "tests/test_catalogue.py",
        "src/shop/cart.py",
        "src/shop/legacy.py",
    ):
        write(repo, path, "# code\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feat(shop): catalogue and cart")
    (repo / "src/shop/legacy.py").unlink()
    git(repo, "commit", "-q", "-am", "refactor: drop legacy")
    git(repo, "commit", "-q", "--allow-empty", "-m", "feat(cart): totals", "-m", "Refs: task-4\nReview: x")
    git(repo, "commit", "-q", "--allow-empty", "-m", "feat(cat): search wip", "-m", "Refs: task-50")
    write(repo, "src/shop/checkout.py", "# untracked\n")
    return repo


def test_exists_partial_missing_against_a_git_repo(
    tmp_path: Path, empty_repo: Path, git: Git, write: Write
) -> None:
    repo = make_repo(empty_repo, git, write)
    plan_file = write(tmp_path, "shop.md", PLAN)
    plan = load_plan(plan_file, repo=repo)
    got = {t.id: (t.presence, t.presence_reason) for t in plan.tasks}
    assert got == {
        "1": (Presence.EXISTS, "all 2 expected file changes are in place"),
        "2": (
            Presence.PARTIAL,
            "1 of 3 expected file changes are in place; missing src/shop/prices.py, tests/test_cart.py",
        ),
        "3": (
            Presence.MISSING,
            "none of 1 expected file changes are in place; missing src/shop/checkout.py "
            "(src/shop/checkout.py on disk but not tracked by git)",
        ),
        "4": (
            Presence.EXISTS,
            "commit "
            + git(repo, "log", "-n1", "--format=%h", "HEAD~1").strip()
            + " feat(cart): totals carries 'Refs: task-4'",
        ),
        # `Refs: task-50` must not count for task 5.
        "5": (Presence.MISSING, "creates or deletes no file and no commit carries 'Refs: task-5'"),
        "6": (Presence.EXISTS, "all 1 expected file changes are in place"),
    }
    assert plan.task("2").decision_log[-1] == (
        "triage PARTIAL: 1 of 3 expected file changes are in place; "
        "missing src/shop/prices.py, tests/test_cart.py"
    )


def test_existing_test_files_are_not_tests_to_add(
    tmp_path: Path, empty_repo: Path, git: Git, write: Write
) -> None:
    repo = make_repo(empty_repo, git, write)
    plan = load_plan(write(tmp_path, "shop.md", PLAN), repo=repo)
    assert plan.task("1").tests_to_add == []
    assert plan.task("1").tests_to_run == ["tests/test_catalogue.py"]
    assert plan.task("2").tests_to_add == ["tests/test_cart.py"]
    assert plan.task("2").tests_to_run == ["tests/test_cart.py"]


def test_empty_repository_without_commits(tmp_path: Path, empty_repo: Path, write: Write) -> None:
    plan = load_plan(write(tmp_path, "shop.md", PLAN), repo=empty_repo)
    assert [t.presence for t in plan.tasks] == [
        Presence.MISSING,
        Presence.MISSING,
        Presence.MISSING,
        Presence.MISSING,
        Presence.MISSING,
        Presence.EXISTS,  # the file to delete is not there
    ]
    assert plan.task("4").presence_reason == "creates or deletes no file and no commit carries 'Refs: task-4'"


def test_folder_that_is_not_a_git_repo(tmp_path: Path, write: Write) -> None:
    folder = tmp_path / "plain"
    write(folder, "src/shop/catalogue.py", "")
    write(folder, "tests/test_catalogue.py", "")
    write(folder, "src/shop/cart.py", "")
    plan = load_plan(write(tmp_path, "shop.md", PLAN), repo=folder)
    assert plan.task("1").presence is Presence.EXISTS
    assert plan.task("2").presence is Presence.PARTIAL
    assert plan.task("4").presence is Presence.MISSING
    assert plan.task("4").presence_reason == (
        "not a git repository: cannot look for a commit with 'Refs: task-4'"
    )


def test_repo_in_a_subfolder_of_a_git_work_tree(empty_repo: Path, git: Git, write: Write) -> None:
    write(empty_repo, "app/src/x.py", "")
    git(empty_repo, "add", "-A")
    git(empty_repo, "commit", "-q", "-m", "x")
    tasks = [Task(id="1", title="X", expected_files=ExpectedFiles(create=["src/x.py"]))]
    [result] = triage(tasks, empty_repo / "app")
    assert (result.presence, result.presence_reason) == (
        Presence.EXISTS,
        "all 1 expected file changes are in place",
    )


def test_triage_without_repo() -> None:
    [result] = triage([Task(id="1", title="X")], None)
    assert (result.presence, result.presence_reason) == (Presence.MISSING, "no repository")
