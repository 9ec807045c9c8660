"""`changes_and_text` reads the changed paths and the patch from one `diff --raw -p`: the same as asked apart."""

from __future__ import annotations

from pm_agent.vcs import Git, parse_unified_diff


def _every_kind_of_change(repo: Git) -> str:
    """Modified, binary, mode, deleted, added, type-changed and oddly named files since the returned commit."""
    root = repo.path
    files = {"a.txt": "a\nb\n", "mode.sh": "x\n", "typ": "t\n", "del": "d\n", 'we"ird\ttab.txt': "q\n", "ünï.txt": "u"}
    for name, text in files.items():
        (root / name).write_text(text)
    (root / "bin").write_bytes(b"\0\1")
    repo.run("add", "-A")
    repo.run("commit", "-q", "--no-verify", "-m", "kinds")
    base = repo.head_sha()
    (root / "a.txt").write_text("a\nc\n")
    (root / "mode.sh").chmod(0o755)
    (root / "bin").write_bytes(b"\0\2")
    (root / "typ").unlink()
    (root / "typ").symlink_to("a.txt")
    (root / "del").unlink()
    (root / "sub").mkdir()
    (root / "sub" / "new.py").write_text("n = 1\n")
    (root / 'we"ird\ttab.txt').write_text("r\n")
    (root / "ünï.txt").write_text("v\n")
    return base


def test_one_call_answers_what_two_did(repo: Git) -> None:
    base = _every_kind_of_change(repo)
    tree = repo.worktree_tree()
    changes, text = repo.changes_and_text(base, tree)
    assert text == repo.diff_text(base, head=tree)
    assert changes.files == repo.diff_name_status(base, tree)
    assert {c.status for c in changes.files} == {"A", "D", "M", "T"}
    lines = parse_unified_diff(text)
    assert (changes.added, changes.removed) == (lines.added, lines.removed)
    assert changes.target == tree


def test_no_change_gives_no_paths_and_no_text(repo: Git) -> None:
    base = repo.head_sha()
    changes, text = repo.changes_and_text(base, repo.rev_parse_tree(base))
    assert (changes.files, text) == ([], "")
    (repo.path / "only.txt").write_text("one\n")
    changes, text = repo.changes_and_text(base)
    assert [(c.status, c.path) for c in changes.files] == [("A", "only.txt")]
    assert text.startswith("diff --git a/only.txt b/only.txt\n")
