"""A tree with a few files written into it, made in-process: git objects written as git writes loose objects.

Delivery commits the checked tree plus pm-agent's own files (the review artifact). That took three git processes
between a task's signal and the next dispatch (`hash-object`, `update-index` on a temporary index, `write-tree`),
~5 ms each on a busy machine. A tree object is its entries in git's order, and a loose object is its header and
content, zlib-compressed, at `objects/<2 hex>/<rest>` named by its hash: here the blob and the trees on the file's
path are written directly, the trees read through the worktree's batch process (`_batch.contents`). The result is
the tree `write-tree` makes of an index holding `tree` and the files (tests/vcs/test_vcs_objects.py compares them).

`tree_with_texts` answers None, and the caller goes git's way, wherever this could differ or is not sure: a tree
hash of neither SHA-1's nor SHA-256's length, a shared repository (git sets group permissions on what it writes), a
path other than plain ASCII names, one that crosses a file, a folder or a submodule where the file would go, a tree
entry git's `write-tree` would not have written (a mode it does not write, names out of its order or twice), an
object the batch cannot read (git before 2.36).

A folder's new entry goes in by binary search among the entries as read, not by sorting them all again: the review
artifacts' folder grows by one file a task, run after run (1,000 entries: 1.6 -> 0.4 ms an edit, zlib at git's level
for loose objects included).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import hashlib
import os
import re
import stat
import tempfile
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["commit_object", "tree_with_texts", "write_object"]

_HASHES = {40: "sha1", 64: "sha256"}
_TREE = b"40000"
# git's own level for loose objects (core.loosecompression unset: 1, best speed); any level reads back the same.
_LOOSE_LEVEL = 1
_FILE = b"100644"
# A name git's verify_path takes on every platform: plain ASCII, not starting with a dot (no `.`, `..`, `.git` in
# any case or NTFS/HFS spelling), no `~` (NTFS's short `git~1`).
_NAME = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]*")

Reader = Callable[[str], "tuple[str, bytes] | None"]


class _Refused(Exception):
    """This edit is left to git."""


def tree_with_texts(read: Reader, git_dir: Path, tree: str, files: Mapping[str, str]) -> str | None:
    """`tree` with `files` (path -> text, as UTF-8 as `hash-object --stdin` takes it) written into it, as the hash
    of a new tree object; None when git should make it (see the module docstring). `read(sha)` gives an object's
    (type, content); `git_dir` is the repository's common git folder."""
    try:
        objects, algo = _objects_of(git_dir, len(tree))
        for path, text in files.items():
            parts = _parts(path)
            blob = write_object(objects, "blob", text.encode("utf-8", "replace"), algo)
            tree = _put(read, objects, algo, tree, parts, blob).hex()
    except (_Refused, OSError):
        return None
    return tree


def _objects_of(git_dir: Path, hash_length: int) -> tuple[Path, str]:
    """The repository's objects folder and hash algorithm; _Refused for an unknown hash length or a shared
    repository (group-writable or setgid objects folder: git sets group permissions on what it writes)."""
    algo = _HASHES.get(hash_length)
    objects = git_dir / "objects"
    if algo is None or objects.stat().st_mode & (stat.S_ISGID | stat.S_IWGRP | stat.S_IWOTH):
        raise _Refused("git writes this repository's objects")
    return objects, algo


def _parts(path: str) -> list[bytes]:
    parts = path.split("/")
    if not all(_NAME.fullmatch(p) for p in parts):
        raise _Refused(path)
    return [p.encode("ascii") for p in parts]


def _put(read: Reader, objects: Path, algo: str, tree: str | None, parts: list[bytes], blob: bytes) -> bytes:
    """The tree `tree` (None: an empty one) with the file `parts` set to `blob`, written; its raw hash."""
    entries, keys = _entries(read, tree, len(blob)) if tree is not None else ([], [])
    name = parts[0]
    at = _find(keys, name)
    current = entries[at] if at >= 0 else None
    if len(parts) == 1:
        if current is not None and current[0] in (_TREE, b"160000"):
            raise _Refused("a folder or a submodule where the file goes")
        entry, key = (_FILE, name, blob), name
    else:  # a file or a submodule where a folder goes is no tree to read: _entries refuses it
        below = _put(read, objects, algo, current[2].hex() if current is not None else None, parts[1:], blob)
        entry, key = (_TREE, name, below), name + b"/"
    if current is not None:
        entries[at] = entry  # the same kind (a file for a file, a folder for a folder): the same place
    else:
        entries.insert(bisect.bisect_left(keys, key), entry)
    return write_object(objects, "tree", b"".join(mode + b" " + n + b"\0" + sha for mode, n, sha in entries), algo)


def _find(keys: list[bytes], name: bytes) -> int:
    """Where the entry named `name` (a file's key or a folder's) is in the sorted `keys`; -1 when there is none."""
    for key in (name, name + b"/"):
        at = bisect.bisect_left(keys, key)
        if at < len(keys) and keys[at] == key:
            return at
    return -1


@functools.cache
def _entry_patterns(size: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """One entry of a tree `write-tree` would write (a mode it writes, a name without `/`, a hash of `size` bytes),
    and a whole tree of them."""
    modes, name = rb"40000|100644|100755|120000|160000", rb"[^\0/]+"
    one = rb"(%s) (%s)\0(.{%d})" % (modes, name, size)
    whole = rb"(?:(?:%s) %s\0.{%d})*" % (modes, name, size)
    return re.compile(one, re.DOTALL), re.compile(whole, re.DOTALL)


def _entries(read: Reader, tree: str, size: int) -> tuple[list[tuple[bytes, bytes, bytes]], list[bytes]]:
    """The tree's entries (mode, name, raw hash) in order, and each one's sort key (a folder's name ends in `/`);
    _Refused when it is not a tree `write-tree` would write: in git's order (names compared as bytes, a folder's as
    if it ended in `/`), each name once."""
    found = read(tree)
    if found is None or found[0] != "tree":
        raise _Refused(f"{tree} is not a tree")
    entry, whole = _entry_patterns(size)
    if whole.fullmatch(found[1]) is None:
        raise _Refused("a tree git cannot have written")
    entries = entry.findall(found[1])  # the whole matched entry by entry: findall reads the same entries
    keys = [name + b"/" if mode == _TREE else name for mode, name, _ in entries]
    if keys != sorted(keys) or len({name for _, name, _ in entries}) != len(entries):
        raise _Refused("a tree git cannot have written")
    return entries, keys


def write_object(objects: Path, kind: str, data: bytes, algo: str) -> bytes:
    """Write one loose object as git does (a temporary file in its folder, read-only, linked to its name; one that
    exists is left and its time refreshed, as git freshens it); its raw hash."""
    header = f"{kind} {len(data)}\0".encode("ascii")
    digest = hashlib.new(algo, header)
    digest.update(data)
    name = digest.hexdigest()
    folder = objects / name[:2]
    final = folder / name[2:]
    if final.exists():
        with contextlib.suppress(OSError):
            os.utime(final)
        return digest.digest()
    try:
        fd, made = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    except FileNotFoundError:  # the first object of its fan-out folder (a mkdir each time costs ~0.2 ms here)
        folder.mkdir(exist_ok=True)
        fd, made = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    temp = Path(made)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(zlib.compress(header + data, _LOOSE_LEVEL))
            os.fchmod(out.fileno(), 0o444)
        try:
            final.hardlink_to(temp)
        except FileExistsError:
            pass  # another writer made it: the same bytes
        except OSError:
            temp.replace(final)  # a file system without hard links
    finally:
        temp.unlink(missing_ok=True)
    return digest.digest()


def commit_object(git_dir: Path, body: bytes, hash_length: int) -> str | None:
    """Write a commit object (its whole text) into the repository; its hash, or None where git should write it."""
    try:
        objects, algo = _objects_of(git_dir, hash_length)
        return write_object(objects, "commit", body, algo).hex()
    except (_Refused, OSError):
        return None
