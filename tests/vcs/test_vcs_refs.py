"""`read_refs`: pm-agent's refs read from the repository's files give what `git for-each-ref` gives, or None
where only git can tell."""

from __future__ import annotations

from pathlib import Path

from pm_agent.vcs import Git
from pm_agent.vcs._refs import read_refs

PREFIXES = ("refs/heads/pm/", "refs/tags/pm/")


def _git_says(repo: Git) -> dict[str, str]:
    out = repo.run("for-each-ref", "--format=%(refname) %(objectname)", *PREFIXES)
    return dict(line.split(" ", 1) for line in out.splitlines())


def test_loose_packed_and_both_read_as_git_lists_them(repo: Git, tmp_path: Path) -> None:
    common = repo.common_dir()
    first = repo.head_sha()
    repo.run("commit", "-q", "--allow-empty", "-m", "second")
    second = repo.head_sha()
    repo.run("branch", "pm/a/work", first)
    repo.run("branch", "pm/b/deep/name", first)
    repo.run("branch", "feature", first)  # not pm-agent's: not listed
    repo.run("tag", "-a", "-m", "annotated", "pm/a/checkpoint-1", first)  # the tag object, not the commit
    repo.run("tag", "pm/a/light", first)
    assert read_refs(common, PREFIXES) == _git_says(repo)
    repo.run("pack-refs", "--all")
    assert not (common / "refs" / "heads" / "pm" / "a" / "work").exists()
    assert "^" in (common / "packed-refs").read_text(), "the annotated tag's peeled line"
    assert read_refs(common, PREFIXES) == _git_says(repo)
    repo.run("update-ref", "refs/heads/pm/a/work", second)  # loose again, over its packed line
    repo.run("update-ref", "-d", "refs/heads/pm/b/deep/name")  # gone from packed-refs
    repo.run("branch", "pm/c/new", second)  # loose only
    (common / "refs" / "heads" / "pm" / "c" / "new.lock").write_text("garbage\n")  # being written: skipped
    found = read_refs(common, PREFIXES)
    assert found == _git_says(repo)
    assert found is not None
    assert found["refs/heads/pm/a/work"] == second
    assert "refs/heads/pm/b/deep/name" not in found
    assert "refs/heads/feature" not in found
    tag = found["refs/tags/pm/a/checkpoint-1"]
    assert tag != first
    assert repo.run("cat-file", "-t", tag).strip() == "tag"


def test_what_only_git_can_read_returns_none(repo: Git) -> None:
    common = repo.common_dir()
    repo.run("branch", "pm/a/work")
    assert read_refs(common, PREFIXES) is not None
    assert read_refs(common, ("refs/heads/pm",)) is None  # a pattern, not a folder
    repo.run("symbolic-ref", "refs/heads/pm/a/alias", "refs/heads/pm/a/work")
    assert read_refs(common, PREFIXES) is None
    repo.run("symbolic-ref", "--delete", "refs/heads/pm/a/alias")
    assert read_refs(common, PREFIXES) == _git_says(repo)
    (common / "packed-refs").write_text("not a ref line\n")
    assert read_refs(common, PREFIXES) is None
    (common / "packed-refs").unlink()
    (common / "refs" / "heads" / "pm" / "a" / "empty").write_text("")
    assert read_refs(common, PREFIXES) is None
    (common / "refs" / "heads" / "pm" / "a" / "empty").unlink()
    (common / "reftable").mkdir()
    assert read_refs(common, PREFIXES) is None
