"""Checks before a run starts, and what a new run takes over from an existing working branch.

Real git repositories in tmp_path; nothing here starts an agent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.config import PmConfig
from pm_agent.engine.startup import (
    base_branch,
    catch_up,
    check_branch,
    check_start,
    done_on_branch,
    repo_root,
    uncommitted_files,
)
from pm_agent.errors import ConfigError, InputError
from pm_agent.plan import load_plan
from pm_agent.plan.models import Presence
from pm_agent.testing.repo import commit_all, git, init_repo
from pm_agent.vcs import Git

PLAN = """\
# notes

### Task 1: First note

**Tier:** low

**Files:**
- Create: `notes/one.md`

**Acceptance criteria:**
- notes/one.md exists

### Task 10: Tenth note

**Tier:** low

**Files:**
- Create: `notes/ten.md`

**Acceptance criteria:**
- notes/ten.md exists
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", files={"README.md": "# r\n", "docs/notes.md": PLAN})


def test_repo_root_finds_the_top_from_a_subfolder(repo: Path) -> None:
    (repo / "docs" / "deep").mkdir()
    assert repo_root(repo / "docs" / "deep") == repo.resolve()


def test_not_a_repository_and_no_commits_are_input_errors(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InputError, match="not a git repository") as info:
        repo_root(plain)
    assert info.value.path == plain
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    with pytest.raises(InputError, match="no commits yet"):
        repo_root(empty)
    with pytest.raises(InputError, match="folder not found"):
        repo_root(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("branch", "fragment"),
    [("main", "is protected"), ("master", "is protected"), ("pm/bad..name", "not a valid git branch name")],
)
def test_bad_working_branch_names_the_config_line(repo: Path, branch: str, fragment: str) -> None:
    (repo / "pm-agent.yaml").write_text(f"retry_budget: 1\nworking_branch: {branch}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=fragment) as info:
        check_branch(Git(repo), branch)
    assert (info.value.path, info.value.line) == (repo / "pm-agent.yaml", 2)


def test_a_working_branch_checked_out_here_is_refused(repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "pm/notes/work")
    with pytest.raises(InputError, match="is checked out here"):
        check_branch(Git(repo), "pm/notes/work")
    check_branch(Git(repo), "pm/other/work")


def test_uncommitted_files_count_untracked_but_not_pm_agents_own_inputs(repo: Path) -> None:
    (repo / "README.md").write_text("# changed\n", encoding="utf-8")
    (repo / "staged.txt").write_text("x\n", encoding="utf-8")
    git(repo, "add", "staged.txt")
    (repo / "new" / "deep").mkdir(parents=True)
    (repo / "new" / "deep" / "file.py").write_text("x = 1\n", encoding="utf-8")
    (repo / "pm-agent.yaml").write_text("retry_budget: 1\n", encoding="utf-8")
    (repo / ".pm-agent").mkdir()
    (repo / ".pm-agent" / "state.db").write_text("", encoding="utf-8")
    (repo / "plans").mkdir()
    (repo / "plans" / "p.md").write_text(PLAN, encoding="utf-8")
    (repo / "design.md").write_text("# design\n", encoding="utf-8")
    found = uncommitted_files(Git(repo), [repo / "plans", repo / "design.md"])
    assert sorted(found) == ["README.md", "new/deep/file.py", "staged.txt"]
    # Without the exemptions the plan folder and design file are changes like any other.
    assert {"plans/p.md", "design.md"} <= set(uncommitted_files(Git(repo)))


def test_check_start_refuses_a_dirty_tree_unless_allowed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")  # the configured Claude Code is logged in
    (repo / "wip.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"uncommitted changes: wip\.py\. Agents work from HEAD") as info:
        check_start(repo, repo / "docs" / "notes.md", None, PmConfig())
    assert "pm-agent.yaml and the plan and design files need not be committed" in str(info.value)
    checked = check_start(repo, repo / "docs" / "notes.md", None, PmConfig(), allow_dirty=True)
    assert checked.dirty == ["wip.py"]
    assert checked.branch == "pm/notes/work"
    assert not (repo / ".pm-agent").exists()
    assert not Git(repo).branch_exists("pm/notes/work")


def test_check_start_refuses_an_agent_binary_that_does_not_exist(repo: Path) -> None:
    config = PmConfig.model_validate({"agent": {"binary": str(repo / "no-such-agent")}})
    with pytest.raises(ConfigError, match="agent: agent binary not found"):
        check_start(repo, repo / "docs" / "notes.md", None, config)


def test_tasks_committed_on_the_working_branch_are_exists(repo: Path) -> None:
    plan = load_plan(repo / "docs" / "notes.md", None, repo)
    assert not done_on_branch(Git(repo), "pm/notes/work", plan)[1]  # no branch yet: nothing taken over
    git(repo, "switch", "-q", "-c", "pm/notes/work")
    (repo / "notes").mkdir()
    (repo / "notes" / "ten.md").write_text("ten\n", encoding="utf-8")
    sha = commit_all(repo, "feat(notes): tenth note\n\nRefs: task-10\nReview: docs/reviews/task-10-review.md")
    (repo / "other.md").write_text("x\n", encoding="utf-8")
    commit_all(repo, "docs: mentions Refs: task-1 inside a sentence only")
    git(repo, "switch", "-q", "main")
    marked, found = done_on_branch(Git(repo), "pm/notes/work", plan)
    assert found == {"10": sha}  # task-1 is not done: neither "task-10" nor a mention in prose count
    by_id = {t.id: t for t in marked.tasks}
    assert by_id["10"].presence is Presence.EXISTS
    assert sha[:12] in by_id["10"].presence_reason
    assert "pm/notes/work" in by_id["10"].decision_log[-1]
    assert by_id["1"].presence is Presence.MISSING


def test_another_plans_commits_on_the_branch_are_refused_not_taken_over(repo: Path) -> None:
    # A plan file of the same name (same plan id, same branch) whose task-10 is another task: its commit is not
    # this plan's task-10 (the run would skip it, doing nothing); a person's own commit cannot be told apart.
    plan = load_plan(repo / "docs" / "notes.md", None, repo)
    git(repo, "switch", "-q", "-c", "pm/notes/work")
    (repo / "billing.md").write_text("b\n", encoding="utf-8")
    commit_all(repo, "feat(billing): add the billing page\n\nRefs: task-10\nReview: docs/reviews/task-10-review.md")
    (repo / "one.md").write_text("1\n", encoding="utf-8")
    mine = commit_all(repo, "did the first note by hand\n\nRefs: task-1")
    git(repo, "switch", "-q", "main")
    with pytest.raises(InputError, match="holds another plan's commits") as info:
        done_on_branch(Git(repo), "pm/notes/work", plan)
    message = str(info.value)
    assert "task-10's commit" in message
    assert "'Tenth note'" in message
    assert "git branch -m pm/notes/work pm/notes/work-old" in message
    assert "task-1's" not in message
    git(repo, "switch", "-q", "pm/notes/work")
    commit_all(repo, "feat(notes): Tenth Note\n\nRefs: task-10")  # the same task, written in another case
    git(repo, "switch", "-q", "main")
    tip = git(repo, "rev-parse", "pm/notes/work").strip()
    assert done_on_branch(Git(repo), "pm/notes/work", plan)[1] == {"1": mine, "10": tip}


def test_another_plans_commits_the_baseline_has_are_history_not_refused(repo: Path) -> None:
    # Plan B's task-10, merged into main, is in the working branch's history too (the branch was made, or moved
    # forward, from main): not this branch's work, so neither refused nor taken over; this plan's own older
    # task-1 commit further back is still found.
    plan = load_plan(repo / "docs" / "notes.md", None, repo)
    (repo / "one.md").write_text("1\n", encoding="utf-8")
    one = commit_all(repo, "feat(notes): first note\n\nRefs: task-1")
    (repo / "billing.md").write_text("b\n", encoding="utf-8")
    commit_all(repo, "feat(billing): add the billing page\n\nRefs: task-10")
    (repo / "b1.md").write_text("b\n", encoding="utf-8")
    commit_all(repo, "feat(billing): invoices\n\nRefs: task-1")
    git(repo, "branch", "pm/notes/work")
    baseline = git(repo, "rev-parse", "HEAD").strip()
    marked, found = done_on_branch(Git(repo), "pm/notes/work", plan, baseline)
    assert found == {"1": one}
    assert {t.id: t.presence for t in marked.tasks}["10"] is Presence.MISSING
    with pytest.raises(InputError, match="holds another plan's commits"):  # without the baseline: as before
        done_on_branch(Git(repo), "pm/notes/work", plan)


def test_a_merged_working_branch_is_moved_forward_to_the_baseline(repo: Path, tmp_path: Path) -> None:
    gitter = Git(repo)
    git(repo, "switch", "-q", "-c", "pm/notes/work")
    (repo / "n.md").write_text("n\n", encoding="utf-8")
    old_tip = commit_all(repo, "feat(notes): first note\n\nRefs: task-1")
    git(repo, "switch", "-q", "main")
    assert catch_up(gitter, "pm/notes/work", git(repo, "rev-parse", "HEAD").strip()) is None  # not merged: left
    assert git(repo, "rev-parse", "pm/notes/work").strip() == old_tip
    git(repo, "merge", "-q", "--no-ff", "-m", "merge the notes", "pm/notes/work")
    (repo / "mine.md").write_text("mine\n", encoding="utf-8")
    baseline = commit_all(repo, "the user's own work after the merge")
    line = catch_up(gitter, "pm/notes/work", baseline)
    assert line is not None
    assert f"moved it forward to {baseline[:12]}" in line
    assert git(repo, "rev-parse", "pm/notes/work").strip() == baseline
    assert catch_up(gitter, "pm/notes/work", baseline) is None  # at the baseline: nothing to do
    assert catch_up(gitter, "pm/other/work", baseline) is None  # no such branch
    git(repo, "branch", "-f", "pm/notes/work", old_tip)
    gitter.worktree_add(tmp_path / "wt", "pm/notes/work")  # someone works on it: left as it is
    assert catch_up(gitter, "pm/notes/work", baseline) is None
    assert git(repo, "rev-parse", "pm/notes/work").strip() == old_tip


def test_base_branch_is_the_remote_default_then_the_checked_out_branch(tmp_path: Path) -> None:
    origin = init_repo(tmp_path / "origin", branch="trunk")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "switch", "-q", "-c", "feature")
    assert base_branch(Git(clone), "pm/x/work") == "trunk"
    local = init_repo(tmp_path / "local", branch="develop")
    assert base_branch(Git(local), "pm/x/work") == "develop"
    git(local, "switch", "-q", "-c", "pm/x/work")
    assert base_branch(Git(local), "pm/x/work") == "your main branch"
    git(local, "branch", "-q", "main", "develop")
    assert base_branch(Git(local), "pm/x/work") == "main"


def test_an_untracked_virtualenv_or_node_modules_is_tooling_not_uncommitted_work(repo: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (repo / "web" / "node_modules" / "left-pad").mkdir(parents=True)
    (repo / "web" / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n", encoding="utf-8")
    (repo / "venvish").mkdir()
    (repo / "venvish" / "work.py").write_text("x = 1\n", encoding="utf-8")  # a folder without pyvenv.cfg is work
    assert uncommitted_files(Git(repo)) == ["venvish/work.py"]
