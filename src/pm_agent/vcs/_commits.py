"""Commits, the trailer lookup that keys idempotent commits, tags and the reflog.

Hooks and signing are off for every commit and tag pm-agent makes; it never amends.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from pm_agent import environ
from pm_agent.errors import VcsError
from pm_agent.vcs import _objects, _refs
from pm_agent.vcs._core import FALLBACK_EMAIL, FALLBACK_NAME, GENERATED_EXCLUDES, NO_HOOKS_ARGS, GitCore
from pm_agent.vcs.models import GitCommandError


class _Facts(NamedTuple):
    """What pm-agent needs of a repository's config, per state of the config files and environment (`_config_key`),
    from one pair of git processes."""

    identity: tuple[str, ...]  # the fallback identity's `-c` arguments, or none
    own: bool  # whether pm-agent may write loose objects (and move branches) itself
    idents: tuple[str, str] | None  # commit-tree's author and committer ("Name <email>", no date); None: git writes
    logs: str | None  # core.logAllRefUpdates (see `_log_mode`); None: git moves branches
    hooks_path: bool  # core.hooksPath is set: hooks may live anywhere


_CONFIG_FACTS: dict[tuple[object, ...], _Facts] = {}
_DATE_VARS = ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
# Config that changes how git writes a loose object (fsync'd, group permissions): then git writes them all.
_OWN_WRITES_CONFIG = ("core.fsync", "core.fsyncobjectfiles", "core.sharedrepository")


def read_reflog(log_path: Path) -> list[str]:
    """A reflog file's entries, oldest first, as "<old> <new> <message>" lines (none when it is missing)."""
    if not log_path.exists():
        return []
    entries = []
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        head, _, msg = line.partition("\t")
        parts = head.split(" ")
        if len(parts) >= 2:
            entries.append(f"{parts[0]} {parts[1]} {msg}")
    return entries


def _now() -> str:
    """Now as git writes a date: `<seconds> <+|-HHMM>` in the local time zone."""
    now = int(time.time())
    offset = time.localtime(now).tm_gmtoff // 60
    return f"{now} {'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"


def _log_mode(values: Mapping[str, str]) -> str | None:
    """core.logAllRefUpdates as "make" (a branch's missing reflog is made), "grow" (only one that exists grows) or
    "default" (unset: make, where git runs with a work tree), None for a value only git reads."""
    value = values.get("core.logallrefupdates")
    if value is None:
        return "default"
    value = value.lower()
    return "make" if value in (*_TRUE, "always") else "grow" if value in _FALSE else None


def _plain_ident(name: str, email: str) -> bool:
    """A name and email git writes as they are (its ident sanitising would change nothing)."""
    crud = " .,:;<>\"\\'"
    return all(part and part.strip(crud) == part for part in (name, email)) and not set("<>\n\0") & set(name + email)


def _raw_date(date: str) -> bool:
    """A date in git's own raw form, `<seconds> <+|-HHMM>`."""
    seconds, _, zone = date.partition(" ")
    return seconds.isdigit() and len(zone) == 5 and zone[0] in "+-" and zone[1:].isdigit()


class GitCommits(GitCore):
    """Committing the worktree, finding a commit by trailer, tagging, reading the reflog."""

    def identity_args(self) -> list[str]:
        """`-c user.name/-c user.email` for pm-agent's fallback identity when none is configured."""
        return list(self._config_facts().identity)

    def commit_tree(self, tree: str, parent: str, message: str, *, author_env: Mapping[str, str] | None = None) -> str:
        """`git commit-tree <tree> -p <parent>` with the message, hooks and signing off, pm-agent's identity (and
        `author_env`'s GIT_AUTHOR_* over it); the new commit's sha.

        The commit object is written in-process (`vcs/_objects.py`: one git process less between a task's signal
        and the next dispatch) with the identity `git var` gave for this config, the date now in the local time
        zone, as git writes it; git writes it where that could differ (see `_idents`, and an author's values that
        are not git's own form)."""
        idents = self._idents()
        author = idents[0] if idents is not None else None
        if author_env is not None and author is not None:
            name, email, date = (
                author_env.get(k, "") for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE")
            )
            author = f"{name} <{email}> {date}" if _plain_ident(name, email) and _raw_date(date) else None
        if idents is not None and author is not None and len(tree) == len(parent):
            when = _now()
            if author_env is None:
                author = f"{author} {when}"
            text = f"tree {tree}\nparent {parent}\nauthor {author}\ncommitter {idents[1]} {when}\n\n{message}"
            written = _objects.commit_object(self.common_dir(), text.encode("utf-8", "replace"), len(tree))
            if written is not None:
                return written
        args = (*NO_HOOKS_ARGS, *self.identity_args(), "commit-tree", tree, "-p", parent, "-F", "-")
        return self.run(*args, stdin_text=message, env=author_env).strip()

    def move_branch(self, branch: str, new: str, old: str, reason: str, *, hooks: bool = False) -> None:
        """`update-ref -m <reason> refs/heads/<branch> <new> <old>`: the branch moves only from `old` (VcsError if it
        is elsewhere), hooks off unless `hooks`. In process where git would write the same (`_refs.move_ref`: one git
        process less, twice a task on the path from a signal to the next dispatch); git does it where a
        reference-transaction hook may run, and wherever the config or the ref is out of the ordinary."""
        facts = self._config_facts()
        ref = f"refs/heads/{branch}"
        plain = reason == " ".join(reason.split())  # else git tidies the message
        if facts.own and facts.idents is not None and facts.logs is not None and plain and not (hooks and self._hook()):
            entry = f"{facts.idents[1]} {_now()}\t{reason}"
            own = self.git_path("HEAD").parent
            # Unset, git makes reflogs where it has a work tree (a linked worktree of a bare repository has one).
            make = facts.logs == "make" or (facts.logs == "default" and (self.path / ".git").exists())
            if _refs.move_ref(self.common_dir(), own, ref, new, old, entry, make_logs=make):
                return
        self.run(*(() if hooks else NO_HOOKS_ARGS), "update-ref", "-m", reason, ref, new, old)

    def _drop_branch(self, name: str) -> bool:
        """`update-ref -d refs/heads/<name>` in process (`_refs.delete_ref`) where no reference-transaction hook
        may run; False: git must do it."""
        if not self._config_facts().own or self._hook():
            return False
        return _refs.delete_ref(self.common_dir(), f"refs/heads/{name}")

    def _hook(self) -> bool:
        """Whether git would run a reference-transaction hook: one in the hooks folder, or core.hooksPath set."""
        return self._config_facts().hooks_path or (self.common_dir() / "hooks" / "reference-transaction").exists()

    def writes_own_objects(self) -> bool:
        """Whether pm-agent may write loose objects itself (`vcs/_objects.py`): git's config asks nothing of their
        writing that pm-agent does not do (no `core.fsync`, `core.fsyncObjectFiles` or `core.sharedRepository`)."""
        return self._config_facts().own

    def _idents(self) -> tuple[str, str] | None:
        """(author, committer) as `commit-tree` would write them without a date; None: leave commits to git."""
        facts = self._config_facts()
        return facts.idents if facts.own else None

    def _config_facts(self) -> _Facts:
        """`identity_args`, `writes_own_objects` and `_idents`' answers, kept per repository until a config file or
        the environment changes (an `include.path` file edited during a run is not seen): asked for every commit
        pm-agent makes, and `git var -l` fails without an identity, which the first answer supplies."""
        key = self._config_key()
        if key is not None and key in _CONFIG_FACTS:
            return _CONFIG_FACTS[key]
        out = self.try_run("config", "--get-regexp", r"^user\.(name|email)$").stdout
        keys = {line.split(" ", 1)[0].lower() for line in out.splitlines() if " " in line}
        configured = all(
            key in keys or os.environ.get(env_key)
            for key, env_key in (("user.name", "GIT_COMMITTER_NAME"), ("user.email", "GIT_COMMITTER_EMAIL"))
        )
        identity = () if configured else ("-c", f"user.name={FALLBACK_NAME}", "-c", f"user.email={FALLBACK_EMAIL}")
        proc = self.try_run(*identity, "var", "-l")
        values = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
        own = proc.returncode == 0 and not any(name in values for name in _OWN_WRITES_CONFIG)
        idents = [values.get(k, "").rsplit(" ", 2) for k in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT")]
        plain = all(len(i) == 3 and i[0].endswith(">") and _raw_date(f"{i[1]} {i[2]}") for i in idents)
        dated = any(environ.current().get(k) for k in _DATE_VARS)  # git would write these dates
        found = (idents[0][0], idents[1][0]) if plain and "i18n.commitencoding" not in values and not dated else None
        facts = _Facts(identity, own, found, _log_mode(values), "core.hookspath" in values)
        if key is not None:
            if len(_CONFIG_FACTS) > 256:  # tests make hundreds of repositories
                _CONFIG_FACTS.clear()
            _CONFIG_FACTS[key] = facts
        return facts

    def _config_key(self) -> tuple[object, ...] | None:
        """What `git config` reads (the config files' contents, the GIT_* variables): None when it cannot be told."""
        try:
            files = self.git_paths("config", "config.worktree")
        except VcsError:
            return None
        env = environ.current()
        home = Path(env.get("HOME") or Path.home())
        xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        files += [
            Path(env.get("GIT_CONFIG_GLOBAL") or home / ".gitconfig"),
            xdg / "git" / "config",
            Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"),
        ]
        # GIT_CONFIG_* and GIT_COMMITTER_* change the answer; HOME and XDG_CONFIG_HOME are in the paths.
        stamps: list[object] = [tuple(sorted((k, v) for k, v in env.items() if k.startswith("GIT_")))]
        for path in files:
            # The content, not the file's stat: `git branch -D` rewrites the config file on every cleanup.
            try:
                stamps.append(path.read_bytes())
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def commit_all(self, message: str, *, author: str | None = None, allow_empty: bool = False) -> str:
        """Stage everything (generated files excluded) and commit it; return the new sha.

        Hooks and signing are off; `author` is "Name <email>". Never amends.
        """
        branch = self.current_branch()
        if branch is None:
            raise VcsError(f"refusing to commit on a detached HEAD in {self.path}")
        self.check_writable(branch, "commit to")
        self.run("add", "-A", "--", ".", *GENERATED_EXCLUDES)
        args = [*NO_HOOKS_ARGS, *self.identity_args(), "commit", "--quiet", "--cleanup=whitespace", "-F", "-"]
        if author:
            args.append(f"--author={author}")
        if allow_empty:
            args.append("--allow-empty")
        elif self.try_run("diff", "--cached", "--quiet").returncode == 0:
            raise VcsError(f"nothing to commit in {self.path}")
        self.run(*args, stdin_text=message)
        return self.head_sha()

    def find_commit_by_trailer(
        self, ref: str, branch: str = "HEAD", *, key: str = "Refs", since: str | None = None
    ) -> str | None:
        """The newest commit on `branch` whose message has the line `<key>: <ref>` exactly, or None.

        The commit-idempotency key: look before committing a task (`ref` like "task-7"). `since`: only
        commits not reachable from it (a run's baseline: an earlier plan's `task-7`, merged, is not this one's).
        """
        return self.find_commit_on_any(ref, [branch], key=key, since=since)

    def find_commit_on_any(
        self, ref: str, branches: Sequence[str], *, key: str = "Refs", since: str | None = None
    ) -> str | None:
        """`find_commit_by_trailer` over every branch in `branches` at once (one `git log`)."""
        return self.find_commits_by_trailers([ref], branches, key=key, since=since).get(ref)

    def _log_bodies(self, greps: Sequence[str], revs: Sequence[str], names: Sequence[str]) -> Iterator[tuple[str, str]]:
        """(sha, message) of each commit of `revs` whose message has one of the fixed strings `greps`, newest
        first; `names` are what an unknown-revision error names."""
        proc = self.try_run(
            "log",
            "--fixed-strings",
            *(f"--grep={g}" for g in greps),
            "--format=%H%x1f%B%x1e",
            "--end-of-options",
            *revs,
            "--",
        )
        if proc.returncode != 0:
            shown = ", ".join(repr(b) for b in names)
            raise GitCommandError(["log", *names], proc.returncode, f"unknown revision {shown}", cwd=self.path)
        for record in proc.stdout.split("\x1e"):
            sha, _, body = record.strip("\n").partition("\x1f")
            if sha:
                yield sha, body

    def find_commits_by_trailers(
        self, refs: Sequence[str], branches: Sequence[str] = ("HEAD",), *, key: str = "Refs", since: str | None = None
    ) -> dict[str, str]:
        """The newest commit on `branches` (and not on `since`) with the line `<key>: <ref>` exactly, for each
        ref found (one `git log` per 200 refs): ref -> sha."""
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(refs))
        revs = [*branches, f"^{since}"] if since else list(branches)
        for start in range(0, len(unique), 200):
            wanted = {f"{key}: {ref}": ref for ref in unique[start : start + 200]}
            for sha, body in self._log_bodies(list(wanted), revs, branches):
                for line in body.splitlines():
                    ref = wanted.get(line.strip())
                    if ref is not None and ref not in found:
                        found[ref] = sha  # newest first: the first match is the newest
        return found

    def commits_by_trailer_prefix(
        self, branch: str, prefix: str, *, key: str = "Refs"
    ) -> dict[str, list[tuple[str, str]]]:
        """{ref: [(sha, subject), ...] newest first} of the commits on `branch` with a line `<key>: <ref>` whose ref
        starts with `prefix` (every such ref, in one git call)."""
        found: dict[str, list[tuple[str, str]]] = {}
        for sha, body in self._log_bodies([f"{key}: {prefix}"], [branch], [branch]):
            refs = set()
            for line in body.splitlines():
                name, sep, value = line.strip().partition(":")
                if sep and name == key and value.strip().startswith(prefix):
                    refs.add(value.strip())
            for ref in refs:
                found.setdefault(ref, []).append((sha, body.partition("\n")[0].strip()))
        return found

    def tag(self, name: str, sha: str, message: str | None = None) -> str:
        """Create tag `name` at `sha` (annotated if `message`); idempotent when it already points there."""
        target = self.rev_parse(sha)
        proc = self.try_run("rev-parse", "--verify", "--quiet", f"refs/tags/{name}^{{commit}}")
        if proc.returncode == 0:
            existing = proc.stdout.strip()
            if existing != target:
                raise VcsError(f"tag {name!r} already exists at {existing[:12]}, not at {target[:12]}")
            return target
        if message is None:
            self.run("tag", name, target)
        else:
            self.run(*NO_HOOKS_ARGS, *self.identity_args(), "tag", "-a", "-m", message, name, target)
        return target

    def tags(self, pattern: str = "*") -> list[str]:
        """Tag names matching the glob `pattern`, sorted."""
        return sorted(self.run("tag", "--list", pattern).split())

    def reflog_entries(self, ref: str = "HEAD") -> list[str]:
        """The reflog of `ref` in this worktree, oldest first, as "<old> <new> <message>" lines."""
        return read_reflog(self.git_path(f"logs/{ref}"))

    def reflog_moved(self, ref: str, since_entries: int) -> list[str]:
        """Reflog messages of `ref` recorded after the first `since_entries` entries (empty: not moved)."""
        return [entry.split(" ", 2)[2] for entry in self.reflog_entries(ref)[since_entries:]]
