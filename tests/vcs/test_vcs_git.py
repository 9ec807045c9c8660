"""Git basics against real repositories: reading, diffs with untracked files, commits, trailers, tags."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import FALLBACK_EMAIL, FALLBACK_NAME, Git, GitCommandError

Write = Callable[[Path, str, str], Path]
Commit = Callable[[Git, str], str]


def test_reading_head_branch_status_tree_and_log(repo: Git, write: Write) -> None:
    assert repo.current_branch() == "main"
    assert len(repo.head_sha()) == 40
    assert repo.is_clean()
    write(repo.path, "new/file.txt", "x\n")
    write(repo.path, "app.py", "changed\n")
    entries = {(e.code, e.path) for e in repo.status_porcelain()}
    assert entries == {("??", "new/file.txt"), (" M", "app.py")}
    assert not repo.is_clean()
    assert repo.file_tree() == ["README.md", "app.py", "new/file.txt"]
    assert repo.file_tree(max_files=1) == ["README.md"]
    [entry] = repo.log(5)
    assert entry.subject == "initial"
    assert entry.author == "Test"
    assert entry.sha == repo.head_sha()


def test_log_of_empty_repository_is_empty(tmp_path: Path) -> None:
    git = Git.init(tmp_path / "empty")
    assert git.log() == []
    with pytest.raises(VcsError):
        git.head_sha()


def test_errors_carry_command_and_stderr(repo: Git) -> None:
    with pytest.raises(GitCommandError) as info:
        repo.run("checkout", "no-such-branch")
    err = info.value
    assert err.cmd[:2] == ["git", "checkout"]
    assert err.returncode != 0
    assert "no-such-branch" in err.stderr
    assert "git checkout no-such-branch" in str(err)


def test_timeout_raises_vcs_error(repo: Git) -> None:
    with pytest.raises(GitCommandError, match="timed out") as info:
        repo.run("hash-object", "--stdin", stdin_text="x", timeout_s=0.000001)
    assert info.value.timed_out


def test_diff_against_working_tree_includes_untracked_files(repo: Git, write: Write) -> None:
    base = repo.head_sha()
    write(repo.path, "app.py", "def greet(name):\n    return f'hello {name}'\n# TODO later\n")
    write(repo.path, "pkg/new.py", "A = 1\nB = 2\n")
    write(repo.path, "pkg/__pycache__/new.cpython-311.pyc", "junk")
    (repo.path / "README.md").unlink()
    index_before = repo.git_path("index").read_bytes()

    assert repo.diff_names(base) == ["README.md", "app.py", "pkg/new.py"]
    statuses = {c.path: c.status for c in repo.diff_name_status(base)}
    assert statuses == {"README.md": "D", "app.py": "M", "pkg/new.py": "A"}
    added = repo.added_lines(base)
    assert added["app.py"] == [(2, "    return f'hello {name}'"), (3, "# TODO later")]
    assert added["pkg/new.py"] == [(1, "A = 1"), (2, "B = 2")]
    changes = repo.changes(base)
    assert changes.removed["README.md"] == [(1, "# demo")]
    assert changes.deleted() == ["README.md"]
    assert "pkg/new.py" in changes.present()
    assert "pkg/new.py" in repo.diff_stat(base)
    text = repo.diff_text(base, paths=["pkg/new.py"])
    assert "+A = 1" in text
    assert "app.py" not in text
    # Snapshotting changed neither the index nor HEAD.
    assert repo.git_path("index").read_bytes() == index_before
    assert repo.head_sha() == base
    assert ("??", "pkg/new.py") in {(e.code, e.path) for e in repo.status_porcelain()}


def test_diff_between_commits(repo: Git, write: Write, commit: Commit) -> None:
    base = repo.head_sha()
    write(repo.path, "b.py", "x = 1\n")
    head = commit(repo, "add b")
    write(repo.path, "uncommitted.py", "y = 2\n")
    assert repo.diff_names(base, head) == ["b.py"]
    assert repo.commits_since(base, "HEAD") == [head]
    assert repo.is_ancestor(base, head)
    assert not repo.is_ancestor(head, base)


def test_commit_all_commits_everything_but_generated_files_and_never_on_main(repo: Git, write: Write) -> None:
    write(repo.path, "x.py", "x = 1\n")
    with pytest.raises(VcsError, match="protected branch 'main'"):
        repo.commit_all("feat: x")
    repo.run("checkout", "-q", "pm/demo/work")
    write(repo.path, "__pycache__/x.cpython-311.pyc", "junk")
    sha = repo.commit_all("feat(x): add x\n\nRefs: task-1\n", author="Agent Smith <smith@example.com>")
    assert sha == repo.head_sha()
    assert repo.run("show", "-s", "--format=%an <%ae>|%cn", sha).strip() == "Agent Smith <smith@example.com>|Test"
    assert repo.run("show", "--name-only", "--format=", sha).split() == ["x.py"]
    with pytest.raises(VcsError, match="nothing to commit"):
        repo.commit_all("feat: nothing")


def test_commit_all_uses_fallback_identity_and_skips_hooks(tmp_path: Path, write: Write) -> None:
    git = Git.init(tmp_path / "r", initial_branch="work")
    hook = write(git.path, ".git/hooks/pre-commit", "#!/bin/sh\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    git.run("config", "commit.gpgsign", "true")  # would fail without a key
    write(git.path, "a.txt", "a\n")
    sha = git.commit_all("chore: first")
    assert git.run("show", "-s", "--format=%an <%ae>", sha).strip() == f"{FALLBACK_NAME} <{FALLBACK_EMAIL}>"


def test_find_commit_by_trailer_is_exact_and_fixed_string(repo: Git, write: Write) -> None:
    repo.run("checkout", "-q", "pm/demo/work")
    assert repo.find_commit_by_trailer("task-7", "pm/demo/work") is None
    write(repo.path, "a.py", "a = 1\n")
    seven = repo.commit_all("feat: a\n\nRefs: task-7\nReview: docs/reviews/task-7-review.md\n")
    write(repo.path, "b.py", "b = 1\n")
    seventy = repo.commit_all("feat: b\n\nRefs: task-70\n")
    write(repo.path, "c.py", "c = 1\n")
    dotted = repo.commit_all("feat: c\n\nRefs: task-1.2\n")
    assert repo.find_commit_by_trailer("task-7", "pm/demo/work") == seven
    assert repo.find_commit_by_trailer("task-70", "pm/demo/work") == seventy
    assert repo.find_commit_by_trailer("task-1.2", "pm/demo/work") == dotted
    assert repo.find_commit_by_trailer("task-1x2", "pm/demo/work") is None  # '.' is not a wildcard
    assert repo.find_commit_by_trailer("task-", "pm/demo/work") is None
    assert repo.find_commit_by_trailer("task-7", "main") is None  # other branch


def test_idempotent_commit_pattern(repo: Git, write: Write) -> None:
    """Before committing a task, look for its trailer: a crash after commit does not commit twice."""
    repo.run("checkout", "-q", "pm/demo/work")
    write(repo.path, "a.py", "a = 1\n")

    def commit_task() -> str:
        found = repo.find_commit_by_trailer("task-3", "pm/demo/work")
        return found if found is not None else repo.commit_all("feat: a\n\nRefs: task-3\n")

    first = commit_task()
    second = commit_task()  # "resume after crash"
    assert first == second
    assert len(repo.commits_since("main", "pm/demo/work")) == 1


def test_tag_is_idempotent_and_refuses_to_move(repo: Git, write: Write) -> None:
    first = repo.head_sha()
    assert repo.tag("pm/demo/checkpoint-task-1", first) == first
    assert repo.tag("pm/demo/checkpoint-task-1", "HEAD") == first  # same sha: no-op
    repo.run("checkout", "-q", "pm/demo/work")
    write(repo.path, "a.py", "a = 1\n")
    second = repo.commit_all("feat: a")
    with pytest.raises(VcsError, match="already exists"):
        repo.tag("pm/demo/checkpoint-task-1", second)
    repo.tag("pm/demo/checkpoint-task-2", second, message="checkpoint after task 2")
    repo.tag("other", second)
    assert repo.tags("pm/demo/*") == ["pm/demo/checkpoint-task-1", "pm/demo/checkpoint-task-2"]
    assert repo.rev_parse("pm/demo/checkpoint-task-2") == second


def test_create_branch_idempotent_and_protected(repo: Git, write: Write) -> None:
    sha = repo.head_sha()
    assert repo.create_branch("feat/demo/task-1-x", "main") == sha
    assert repo.create_branch("feat/demo/task-1-x", sha) == sha
    repo.run("checkout", "-q", "pm/demo/work")
    write(repo.path, "a.py", "a = 1\n")
    other = repo.commit_all("feat: a")
    with pytest.raises(VcsError, match="already exists"):
        repo.create_branch("feat/demo/task-1-x", other)
    with pytest.raises(VcsError, match="protected"):
        repo.create_branch("master", sha)


def test_identity_is_asked_again_when_the_config_or_environment_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git = Git.init(tmp_path / "r")
    fallback = ["-c", f"user.name={FALLBACK_NAME}", "-c", f"user.email={FALLBACK_EMAIL}"]
    assert git.identity_args() == fallback
    assert Git(git.path).identity_args() == fallback  # kept: a new handle on the same repository
    git.run("config", "user.name", "Someone")
    assert git.identity_args() == fallback  # an email is still missing
    git.run("config", "user.email", "someone@example.com")
    assert git.identity_args() == []
    git.run("config", "--unset", "user.email")
    assert git.identity_args() == fallback
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "env@example.com")
    assert git.identity_args() == []


def test_find_commits_by_trailers_answers_like_one_lookup_per_ref(repo: Git, write: Write) -> None:
    repo.run("checkout", "-q", "pm/demo/work")
    shas = {}
    for n, message in enumerate(["Refs: task-1", "Refs: task-12", "Refs: task-1\nReview: again", "Refs: task-2x"]):
        write(repo.path, f"f{n}.py", f"x = {n}\n")
        shas[n] = repo.commit_all(f"feat: {n}\n\n{message}\n")
    refs = ["task-1", "task-12", "task-2", "task-9", "task-1"]
    many = repo.find_commits_by_trailers(refs, ["pm/demo/work"])
    one_by_one = {ref: repo.find_commit_by_trailer(ref, "pm/demo/work") for ref in refs}
    assert many == {ref: sha for ref, sha in one_by_one.items() if sha is not None}
    assert many == {"task-1": shas[2], "task-12": shas[1]}
    with pytest.raises(GitCommandError):
        repo.find_commits_by_trailers(["task-1"], ["no-such-branch"])


def test_commits_by_trailer_prefix_gives_each_refs_commits_newest_first_with_their_subjects(
    repo: Git, write: Write
) -> None:
    repo.run("checkout", "-q", "pm/demo/work")
    shas = {}
    messages = [
        "feat(a): one\n\nRefs: task-1",
        "feat(b): twelve\n\nRefs: task-12",
        "fix(a): one again\n\nRefs: task-1\nReview: again",
        "docs: prose that says Refs: task-9 in passing",
        "chore: other\n\nRefs: issue-4",
    ]
    for n, message in enumerate(messages):
        write(repo.path, f"f{n}.py", f"x = {n}\n")
        shas[n] = repo.commit_all(message + "\n")
    found = repo.commits_by_trailer_prefix("pm/demo/work", "task-")
    assert found == {
        "task-1": [(shas[2], "fix(a): one again"), (shas[0], "feat(a): one")],
        "task-12": [(shas[1], "feat(b): twelve")],
    }
    assert {ref: commits[0][0] for ref, commits in found.items()} == repo.find_commits_by_trailers(
        ["task-1", "task-12", "task-9"], ["pm/demo/work"]
    )
    assert repo.commits_by_trailer_prefix("main", "task-") == {}


def test_changes_and_text_match_changes_and_diff_text(repo: Git, write: Write) -> None:
    base = repo.head_sha()
    long = "".join(f"line {i}\n" for i in range(40))
    write(repo.path, "long.txt", long)
    write(repo.path, "gone.txt", "bye\n")
    repo.run("add", "-A")
    repo.run("commit", "-q", "-m", "more")
    base = repo.head_sha()
    edited = long.replace("line 3\n", "three\n").replace("line 5\n", "-- five\n").replace("line 30\n", "")
    write(repo.path, "long.txt", edited + "--- not a header\nno newline at the end")
    (repo.path / "gone.txt").unlink()
    write(repo.path, "new dir/ünï.py", "x = 1\r\ny = 2\n")
    (repo.path / "blob.bin").write_bytes(bytes(range(256)))
    tree = repo.worktree_tree()
    changes, text = repo.changes_and_text(base, tree)
    assert changes == repo.changes(base, tree)
    assert text == repo.diff_text(base, head=tree)
    assert changes.added["long.txt"][:2] == [(4, "three"), (6, "-- five")]
    assert changes.status_of("gone.txt") == "D"
