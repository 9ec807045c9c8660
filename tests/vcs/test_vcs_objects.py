"""Trees with files written into them in-process (vcs/_objects.py), against what git makes of the same edit.

`tree_with_files` used to be `hash-object`, `update-index` on an index holding the tree, and `write-tree`. Each
case here makes the tree both ways in a real repository and compares the hashes; `git fsck --strict` then checks
every object written (a tree out of git's order, a wrong header or a corrupt zlib stream fail it).
"""

from __future__ import annotations

import os
import random
import stat
import subprocess
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from pm_agent.errors import VcsError
from pm_agent.vcs import Git, _batch, _objects
from pm_agent.vcs.integrate import _commit_text
from pm_agent.vcs.snapshot import tree_with_files

from .conftest import count_git_calls

NAMES = ["a", "a.b", "a-b", "a_b", "ab", "b", "a0", "A", "z.txt", "docs", "reviews", "x+y"]


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _by_git(repo: Path, tree: str, files: Mapping[str, str], tmp: Path) -> str:
    """What the git way makes: the tree read into a fresh index, each file hashed and added, the index written."""
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp / "git-way-index")}
    (tmp / "git-way-index").unlink(missing_ok=True)
    subprocess.run(["git", "read-tree", tree], cwd=repo, env=env, check=True)
    for path, text in files.items():
        blob = _git(repo, "hash-object", "-w", "--no-filters", "--stdin", stdin=text)
        subprocess.run(
            ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], cwd=repo, env=env, check=True
        )
    return subprocess.run(["git", "write-tree"], cwd=repo, env=env, capture_output=True, text=True).stdout.strip()


def _in_process(git: Git, tree: str, files: Mapping[str, str]) -> str | None:
    return _objects.tree_with_texts(git.object_contents, git.common_dir(), tree, files)


def _random_tree(git: Git, rng: random.Random) -> str:
    """A commit of random files (some executable, a symbolic link) in nested folders; its tree."""
    for path in git.path.iterdir():
        if path.name != ".git":
            subprocess.run(["rm", "-rf", str(path)], check=True)
    for _ in range(rng.randint(1, 12)):
        parts = [rng.choice(NAMES) for _ in range(rng.randint(1, 3))]
        target = git.path.joinpath(*parts)
        if any(p.is_file() for p in [target, *target.parents] if p != git.path) or target.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"{rng.random()}\n", encoding="utf-8")
        if rng.random() < 0.2:
            target.chmod(0o755)
    if rng.random() < 0.5 and not (git.path / "link").exists():
        (git.path / "link").symlink_to("a")
    git.run("add", "-A")
    git.run("commit", "-q", "--allow-empty", "--no-verify", "-m", "random")
    return git.rev_parse_tree("HEAD")


def _edit(git: Git, tree: str, rng: random.Random) -> dict[str, str]:
    """One to three files to write: new or existing paths, at the top or under new or existing folders."""
    listed = _git(git.path, "ls-tree", "-r", "--name-only", tree).splitlines()
    files: dict[str, str] = {}
    for _ in range(rng.randint(1, 3)):
        if listed and rng.random() < 0.4:
            path = rng.choice(listed)  # replace a file (an executable or the link become a plain file)
        else:
            path = "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 4)))
        files[path] = rng.choice(["", "review\n", "é ü 中\n", "no newline", "x" * 5000, "a\r\nb\n"])
    return files


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_random_edits_make_the_tree_git_makes(tmp_path: Path, object_format: str) -> None:
    repo = tmp_path / "repo"
    _git(tmp_path, "init", "-q", f"--object-format={object_format}", str(repo))
    _git(repo, "config", "user.name", "T")
    _git(repo, "config", "user.email", "t@example.invalid")
    git = Git(repo)
    rng = random.Random(20261127)
    made = refused = 0
    for _ in range(60):
        tree = _random_tree(git, rng)
        files = _edit(git, tree, rng)
        try:
            expected: str | None = _by_git(repo, tree, files, tmp_path)
        except subprocess.CalledProcessError:
            expected = None  # git refuses the edit (a file where a folder is, or the reverse)
        ours = _in_process(git, tree, files)
        if ours is None:
            refused += 1
        else:
            made += 1
            assert ours == expected, (files, _git(repo, "ls-tree", "-r", tree))
    assert made > 40, (made, refused)  # most edits are made in-process; the rest were refused, never wrong
    assert refused > 0
    _git(repo, "fsck", "--strict", "--no-dangling")


def test_tree_with_files_writes_no_git_process_and_reads_back(tmp_path: Path, new_git: Callable[..., Git]) -> None:
    git = new_git(tmp_path / "repo")
    (git.path / "docs" / "reviews").mkdir(parents=True)
    (git.path / "docs" / "reviews" / "old.md").write_text("old\n", encoding="utf-8")
    (git.path / "app.py").write_text("x = 1\n", encoding="utf-8")
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "one")
    tree = git.rev_parse_tree("HEAD")
    files = {"docs/reviews/task-3-review.md": "# review\n", "NOTES.md": "n\n"}
    assert git.writes_own_objects()  # git's config, read once (`git var -l`)
    calls = count_git_calls(git)
    made = tree_with_files(git, tree, files)
    assert calls == []
    blob = _git(git.path, "rev-parse", f"{made}:NOTES.md")
    loose = git.common_dir() / "objects" / blob[:2] / blob[2:]
    assert stat.S_IMODE(loose.stat().st_mode) == 0o444  # written here: git has not made this blob
    expected = _by_git(git.path, tree, files, tmp_path)
    assert made == expected
    assert _git(git.path, "show", f"{expected}:docs/reviews/task-3-review.md") == "# review"
    assert not list((git.common_dir() / "objects").glob("*/tmp_obj_*"))


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        "a/.GIT/x",
        "docs/git~1/x",
        "a/../b",
        "./a",
        "a//b",
        "/a",
        "a/",
        "é.md",
        "a b.md",
        "app.py/inside.md",  # a file where a folder goes
        "docs",  # a folder where the file goes
    ],
)
def test_what_git_might_do_otherwise_is_left_to_git(tmp_path: Path, new_git: Callable[..., Git], path: str) -> None:
    git = new_git(tmp_path / "repo")
    (git.path / "docs").mkdir()
    (git.path / "docs" / "a.md").write_text("a\n", encoding="utf-8")
    (git.path / "app.py").write_text("x = 1\n", encoding="utf-8")
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "one")
    assert _in_process(git, git.rev_parse_tree("HEAD"), {path: "text\n"}) is None


def test_a_submodule_entry_is_left_to_git(tmp_path: Path, new_git: Callable[..., Git]) -> None:
    git = new_git(tmp_path / "repo")
    (git.path / "app.py").write_text("x = 1\n", encoding="utf-8")
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "one")
    head = git.head_sha()
    git.run("update-index", "--add", "--cacheinfo", f"160000,{head},lib")
    git.run("commit", "-q", "-m", "a submodule")
    tree = git.rev_parse_tree("HEAD")
    assert _in_process(git, tree, {"lib": "x"}) is None
    assert _in_process(git, tree, {"lib/x.md": "x"}) is None
    assert _in_process(git, tree, {"other.md": "x"}) == _by_git(git.path, tree, {"other.md": "x"}, tmp_path)


def test_a_tree_git_would_not_write_is_left_to_git(tmp_path: Path, new_git: Callable[..., Git]) -> None:
    """An old tool's group-writable mode (100664): `write-tree` would write 100644 for the entry it keeps."""
    git = new_git(tmp_path / "repo")
    objects = git.common_dir() / "objects"
    blob = _objects.write_object(objects, "blob", b"a\n", "sha1")
    for mode, expected_none in ((b"100664", True), (b"100644", False)):
        tree = _objects.write_object(objects, "tree", mode + b" a.md\0" + blob, "sha1").hex()
        assert (_in_process(git, tree, {"b.md": "b\n"}) is None) is expected_none


@pytest.mark.parametrize(
    "entries",
    [
        [b"100644 b.md", b"100644 a.md"],  # out of git's order
        [b"100644 a.md", b"100644 a.md"],  # a name twice
        [b"100644 a", b"40000 a"],  # a file and a folder of one name
        [b"100644 a/b.md"],  # a path where a name goes
        [b"100644 "],  # no name
    ],
)
def test_a_tree_out_of_order_or_naming_twice_is_left_to_git(
    tmp_path: Path, new_git: Callable[..., Git], entries: list[bytes]
) -> None:
    """Trees `write-tree` never writes: an edit of one is git's to make (or to refuse), never a guess of ours."""
    git = new_git(tmp_path / "repo")
    objects = git.common_dir() / "objects"
    blob = _objects.write_object(objects, "blob", b"a\n", "sha1")
    folder = _objects.write_object(objects, "tree", b"100644 x.md\0" + blob, "sha1")
    body = b"".join(e + b"\0" + (folder if e.startswith(b"40000") else blob) for e in entries)
    tree = _objects.write_object(objects, "tree", body, "sha1").hex()
    assert _in_process(git, tree, {"c.md": "c\n"}) is None
    good = _objects.write_object(objects, "tree", b"100644 a.md\0" + blob + b"100644 b.md\0" + blob, "sha1").hex()
    assert _in_process(git, good, {"c.md": "c\n"}) == _by_git(git.path, good, {"c.md": "c\n"}, tmp_path)


def test_a_large_folder_gets_its_file_in_git_s_place(tmp_path: Path, new_git: Callable[..., Git]) -> None:
    """A folder of hundreds of files (the review artifacts of many runs): the new file goes where git puts it."""
    git = new_git(tmp_path / "repo")
    (git.path / "docs" / "reviews").mkdir(parents=True)
    for n in range(300):
        (git.path / "docs" / "reviews" / f"task-{n}-review.md").write_text(f"{n}\n", encoding="utf-8")
    (git.path / "docs" / "reviews.md").write_text("x\n", encoding="utf-8")
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "many")
    tree = git.rev_parse_tree("HEAD")
    for files in (
        {"docs/reviews/task-1000-review.md": "new\n"},
        {"docs/reviews/task-150-review.md": "changed\n"},
        {"docs/reviews/a.md": "first\n", "docs/reviews/zz.md": "last\n", "docs/reviews-x": "after\n"},
    ):
        assert _in_process(git, tree, files) == _by_git(git.path, tree, files, tmp_path)
    _git(git.path, "fsck", "--strict", "--no-dangling")


def test_what_is_not_a_tree_is_never_read_as_one(tmp_path: Path, new_git: Callable[..., Git]) -> None:
    """A file whose bytes happen to parse as a tree, where a folder goes; a tree object cut short."""
    git = new_git(tmp_path / "repo")
    objects = git.common_dir() / "objects"
    looks_like_a_tree = b"100644 x\0" + bytes(20)
    (git.path / "a").write_bytes(looks_like_a_tree)
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "one")
    assert _in_process(git, git.rev_parse_tree("HEAD"), {"a/b.md": "b\n"}) is None
    cut = _objects.write_object(objects, "tree", b"100644 " + b"abcdefghijklm", "sha1").hex()  # no NUL, no hash
    assert _in_process(git, cut, {"b.md": "b\n"}) is None


@pytest.mark.parametrize(
    ("key", "value"),
    [("core.fsync", "loose-object"), ("core.fsyncObjectFiles", "true"), ("core.sharedRepository", "0640")],
)
def test_config_about_writing_objects_leaves_them_to_git(
    tmp_path: Path, new_git: Callable[..., Git], key: str, value: str
) -> None:
    """Objects git would fsync or give other permissions: git writes them, the tree and the commit alike."""
    git = new_git(tmp_path / "repo")
    (git.path / "a.md").write_text("a\n", encoding="utf-8")
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "one")
    git.run("config", key, value)
    tree, head = git.rev_parse_tree("HEAD"), git.head_sha()
    assert not git.writes_own_objects()
    calls = count_git_calls(git)
    made = tree_with_files(git, tree, {"b.md": "b\n"})
    git.commit_tree(made, head, "m\n")
    assert {"hash-object", "write-tree", "commit-tree"} <= {arg for call in calls for arg in call}
    assert made == _by_git(git.path, tree, {"b.md": "b\n"}, tmp_path)


def test_a_shared_repository_is_left_to_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _git(tmp_path, "init", "-q", "--shared=group", str(repo))
    _git(repo, "config", "user.name", "T")
    _git(repo, "config", "user.email", "t@example.invalid")
    (repo / "a.md").write_text("a\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    git = Git(repo)
    tree = git.rev_parse_tree("HEAD")
    assert _in_process(git, tree, {"b.md": "b\n"}) is None
    assert tree_with_files(git, tree, {"b.md": "b\n"}) == _by_git(repo, tree, {"b.md": "b\n"}, tmp_path)


def test_without_batch_command_git_makes_the_tree_and_reads_the_commit(
    tmp_path: Path, new_git: Callable[..., Git], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git before 2.36 has no `cat-file --batch-command`: the batch resolves, git itself does the rest."""
    _batch.close_all()
    monkeypatch.setattr(_batch, "_COMMANDS", [False])
    git = new_git(tmp_path / "repo")
    (git.path / "a.md").write_text("a\n", encoding="utf-8")
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "one\n\nbody")
    tree = git.rev_parse_tree("HEAD")
    with pytest.raises(OSError, match="batch-command"):
        git.object_contents(tree)
    assert _in_process(git, tree, {"b.md": "b\n"}) is None
    assert tree_with_files(git, tree, {"b.md": "b\n"}) == _by_git(git.path, tree, {"b.md": "b\n"}, tmp_path)
    assert _commit_text(git, git.head_sha()) == _git(git.path, "cat-file", "commit", "HEAD") + "\n"
    _batch.close_all()


def test_the_batch_reads_objects_byte_for_byte(tmp_path: Path, new_git: Callable[..., Git]) -> None:
    git = new_git(tmp_path / "repo")
    data = bytes(range(256)) * 3 + b"\n\n\nend"
    (git.path / "bin").write_bytes(data)
    git.run("add", "-A")
    git.run("commit", "-q", "-m", "binary\n\nwith a body")
    blob = _git(git.path, "rev-parse", "HEAD:bin")
    assert git.object_contents(blob) == ("blob", data)
    assert git.object_contents("0" * 40) is None
    assert git.rev_parse("HEAD") == git.head_sha()  # questions and reads share the process
    assert _commit_text(git, git.head_sha()) == _git(git.path, "cat-file", "commit", "HEAD") + "\n"
    # What the picked commit's text was before (git.run's decoding), a carriage return in the message too.
    odd = git.run("commit-tree", git.rev_parse_tree("HEAD"), "-F", "-", stdin_text="subject\r\n\nbody\rend\n").strip()
    assert _commit_text(git, odd) == git.run("cat-file", "commit", odd)
    with pytest.raises(VcsError):
        _commit_text(git, git.rev_parse_tree("HEAD"))  # not a commit: as `git cat-file commit` says


def test_an_object_written_twice_at_once_is_one_good_object(tmp_path: Path, new_git: Callable[..., Git]) -> None:
    git = new_git(tmp_path / "repo")
    objects = git.common_dir() / "objects"
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for n in range(50):
                _objects.write_object(objects, "blob", f"same {n}\n".encode(), "sha1")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert _git(git.path, "hash-object", "--stdin", stdin="same 7\n") == _git(
        git.path, "rev-parse", _objects.write_object(objects, "blob", b"same 7\n", "sha1").hex()
    )
    _git(git.path, "fsck", "--strict")
    assert not list(objects.glob("*/tmp_obj_*"))
