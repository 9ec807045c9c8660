"""`Git.commit_tree`: the commit object written in-process, byte for byte the commit `git commit-tree` writes.

Each case fixes the clock for pm-agent (`time.time`) and gives git the same second through GIT_*_DATE, then
compares the two commits' hashes; the cases pm-agent leaves to git are checked to be git's commit.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pm_agent.vcs import Git, _commits

from .conftest import count_git_calls

NOW = 1_790_000_000


@pytest.fixture
def repo(tmp_path: Path, new_git: Callable[..., Git]) -> Git:
    git = new_git(tmp_path / "repo")
    (git.path / "a.md").write_text("a\n", encoding="utf-8")
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "one")
    return git


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_commits.time, "time", lambda: float(NOW))
    _commits._CONFIG_FACTS.clear()
    yield
    _commits._CONFIG_FACTS.clear()


def _zone(at: int) -> str:
    offset = time.localtime(at).tm_gmtoff // 60
    return f"{'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"


def _by_git(git: Git, tree: str, parent: str, message: str, env: dict[str, str] | None = None) -> str:
    dated = {"GIT_AUTHOR_DATE": f"{NOW} {_zone(NOW)}", "GIT_COMMITTER_DATE": f"{NOW} {_zone(NOW)}", **(env or {})}
    args = ["git", *_commits.NO_HOOKS_ARGS, *git.identity_args(), "commit-tree", tree, "-p", parent, "-F", "-"]
    done = subprocess.run(
        args, cwd=git.path, input=message.encode(), env={**os.environ, **dated}, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


MESSAGES = ["feat: one\n", "no newline", "subject\n\nbody é 中\n\nRefs: task-3\n", "a\r\nb\n", "", "\n\n\n"]


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham"])
def test_the_commit_is_git_s_commit(repo: Git, clock: None, monkeypatch: pytest.MonkeyPatch, zone: str) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        tree, head = repo.rev_parse_tree("HEAD"), repo.head_sha()
        for message in MESSAGES:
            assert repo.commit_tree(tree, head, message) == _by_git(repo, tree, head, message), (zone, message)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_no_git_process_after_the_first_commit(repo: Git, clock: None) -> None:
    tree, head = repo.rev_parse_tree("HEAD"), repo.head_sha()
    repo.commit_tree(tree, head, "first\n")  # asks `git var` once for this config
    calls = count_git_calls(repo)
    made = repo.commit_tree(tree, head, "second\n")
    assert calls == []
    assert subprocess.run(["git", "cat-file", "-t", made], cwd=repo.path, capture_output=True, text=True).stdout == (
        "commit\n"
    )
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo.path, check=True)


def test_identities_as_git_resolves_them(
    tmp_path: Path, repo: Git, clock: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, head = repo.rev_parse_tree("HEAD"), repo.head_sha()
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Someone Else")  # the author differs from the committer
    assert repo.commit_tree(tree, head, "m\n") == _by_git(repo, tree, head, "m\n")
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    bare = Git.init(tmp_path / "no-identity")  # pm-agent's fallback identity
    (bare.path / "x").write_text("x", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=bare.path, check=True)
    tree2 = bare.run("write-tree").strip()
    first = bare.run(*bare.identity_args(), "commit-tree", tree2, "-m", "root").strip()
    assert bare.identity_args()  # no identity configured: the fallback's -c arguments
    assert bare.commit_tree(tree2, first, "m\n") == _by_git(bare, tree2, first, "m\n")


def test_a_picked_commit_keeps_its_author(repo: Git, clock: None) -> None:
    tree, head = repo.rev_parse_tree("HEAD"), repo.head_sha()
    author = {"GIT_AUTHOR_NAME": "Ada L", "GIT_AUTHOR_EMAIL": "ada@example.com", "GIT_AUTHOR_DATE": "1700000000 -0230"}
    assert repo.commit_tree(tree, head, "pick\n", author_env=author) == _by_git(repo, tree, head, "pick\n", author)


@pytest.mark.parametrize(
    "author",
    [
        {"GIT_AUTHOR_NAME": " Bob.", "GIT_AUTHOR_EMAIL": "bob@example.com", "GIT_AUTHOR_DATE": "1700000000 +0000"},
        {"GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": "bob@example.com.", "GIT_AUTHOR_DATE": "1700000000 +0000"},
        {"GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": "bob@example.com", "GIT_AUTHOR_DATE": "2023-11-14 22:13:20"},
        {"GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": "bob@example.com", "GIT_AUTHOR_DATE": "1700000000 +100"},
    ],
)
def test_an_author_git_would_rewrite_is_left_to_git(repo: Git, clock: None, author: dict[str, str]) -> None:
    tree, head = repo.rev_parse_tree("HEAD"), repo.head_sha()
    calls = count_git_calls(repo)
    made = repo.commit_tree(tree, head, "pick\n", author_env=author)
    assert any("commit-tree" in call for call in calls)
    author_line = [line for line in repo.run("cat-file", "commit", made).splitlines() if line.startswith("author ")]
    theirs = repo.run("cat-file", "commit", _by_git(repo, tree, head, "pick\n", author)).splitlines()
    assert author_line == [line for line in theirs if line.startswith("author ")]  # git's rewriting (its clock differs)


def test_dates_in_the_environment_and_a_commit_encoding_are_left_to_git(
    repo: Git, clock: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, head = repo.rev_parse_tree("HEAD"), repo.head_sha()
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1600000000 +0100")
    made = repo.commit_tree(tree, head, "m\n")
    assert "committer Test <test@example.com> 1600000000 +0100" in repo.run("cat-file", "commit", made)
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    repo.run("config", "i18n.commitEncoding", "ISO-8859-1")
    made = repo.commit_tree(tree, head, "m\n")
    assert "\nencoding ISO-8859-1\n" in repo.run("cat-file", "commit", made)
