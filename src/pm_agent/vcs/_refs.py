"""Refs read, branches moved and deleted in the repository's files, as git's files backend does, without a git
process.

The checkout guard reads pm-agent's refs after every agent session, each task's commit and landing move a
branch (three git processes a task on the path from a signal to the next dispatch), and a finished task's
branch is deleted. The files backend is simple:
`packed-refs` (one `<object> <name>` line per ref, `^<object>` lines peel the one above) and loose files under
`refs/`, a loose ref overriding a packed one; a loose ref is written under `<ref>.lock`, git's own lock, and
renamed into place. Anything else (the reftable backend, a symbolic ref, a file that is not one object id, a
lock held) returns None or False, and the caller asks git."""

from __future__ import annotations

import os
import re
from pathlib import Path

_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def read_refs(common_dir: Path, prefixes: tuple[str, ...]) -> dict[str, str] | None:
    """Full ref name -> object id for the refs whose names start with one of `prefixes` (each ending in `/`);
    None when only git can tell."""
    if not all(p.startswith("refs/") and p.endswith("/") for p in prefixes) or (common_dir / "reftable").exists():
        return None
    found = _packed(common_dir / "packed-refs", prefixes)
    if found is None:
        return None
    for prefix in prefixes:
        top = common_dir / prefix
        for folder, _, files in os.walk(top):
            for name in files:
                if name.endswith(".lock"):  # a ref being written: git renames it into place when done
                    continue
                path = Path(folder) / name
                try:
                    value = path.read_text(encoding="ascii").strip()
                except (OSError, UnicodeDecodeError):
                    return None
                if not _OBJECT_ID.fullmatch(value):
                    return None
                found[path.relative_to(common_dir).as_posix()] = value
    return found


def _packed(path: Path, prefixes: tuple[str, ...]) -> dict[str, str] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError):
        return None
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in "#^":
            continue
        value, _, name = line.partition(" ")
        if not _OBJECT_ID.fullmatch(value) or not name:
            return None
        if name.startswith(prefixes):
            found[name] = value
    return found


def move_ref(common_dir: Path, own_dir: Path, ref: str, new: str, old: str, entry: str, *, make_logs: bool) -> bool:
    """Move the branch `ref` from `old` to `new` as git's files backend does (`update-ref <ref> <new> <old>`):
    under git's lock file, the reflog line `<old> <new> <entry>` appended (the branch's, and HEAD's where the
    worktree whose git directory is `own_dir` has it checked out), the new value renamed into place.

    `entry` is "<committer ident> <date>\\t<message>"; `make_logs`: a missing reflog is made (core.logAllRefUpdates,
    true by default in a repository with a checkout), else only one that exists grows. False, with nothing
    changed, when git must do it: the reftable backend, a lock held, `ref` not at `old` (git then says so), a
    symbolic or unreadable ref."""
    path = common_dir / ref
    if (common_dir / "reftable").exists() or len(new) != len(old):
        return False
    lock = path.with_name(f"{path.name}.lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # a packed branch's folder may be gone: git makes it too
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError:  # a git process holds it, or a file is in the way: git waits, or says what is wrong
        return False
    done = False
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            if _value(common_dir, ref) != old:
                return False
            out.write(f"{new}\n")
        line = f"{old} {new} {entry}\n"
        _log(common_dir / "logs" / ref, line, create=make_logs)
        try:
            head = (own_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            head = ""
        if head == f"ref: {ref}":
            _log(own_dir / "logs" / "HEAD", line, create=make_logs)
        lock.replace(path)
        done = True
        return True
    finally:
        if not done:
            lock.unlink(missing_ok=True)


def _value(common_dir: Path, ref: str) -> str | None:
    """The object id `ref` holds (loose, else packed), None when it is absent, symbolic or unreadable."""
    try:
        text = (common_dir / ref).read_text(encoding="ascii").strip()
    except FileNotFoundError:
        packed = _packed(common_dir / "packed-refs", (ref,))
        return None if packed is None else packed.get(ref)
    except (OSError, UnicodeDecodeError):
        return None
    return text if _OBJECT_ID.fullmatch(text) else None


def _log(path: Path, line: str, *, create: bool) -> None:
    if not create and not path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log:
        log.write(line)


def delete_ref(common_dir: Path, ref: str) -> bool:
    """Delete the loose branch `ref` as git's files backend does (`update-ref -d`): under its lock, the ref file
    and its reflog removed, then the folders they leave empty. False, with nothing changed, when git must do it:
    the reftable backend, a ref `packed-refs` holds too (git rewrites that file), a lock held, a symbolic ref."""
    packed = _packed(common_dir / "packed-refs", (ref,))
    if (common_dir / "reftable").exists() or packed is None or ref in packed:
        return False
    path = common_dir / ref
    lock = path.with_name(f"{path.name}.lock")
    try:
        os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError:
        return False
    try:
        if _value(common_dir, ref) is None:
            return False
        path.unlink()
        (common_dir / "logs" / ref).unlink(missing_ok=True)
    finally:
        lock.unlink(missing_ok=True)
    for root in (common_dir, common_dir / "logs"):  # as git does: the folders left empty go, up to refs/heads
        for folder in (root / ref).parents:
            if folder == root / "refs" / "heads" or root not in folder.parents:
                break
            try:
                folder.rmdir()
            except OSError:  # not empty (or gone): the ones above are not empty either
                break
    return True
