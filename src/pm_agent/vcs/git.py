"""The git CLI through subprocess, bound to one repository or worktree.

Every call has a timeout; every failure raises `GitCommandError` (a `VcsError`) naming the command and
its stderr. pm-agent never force-pushes, never amends and never writes to a protected branch
(main/master by default): those are read only.

Diffs "against the working tree" include untracked files: the worktree is snapshotted into a tree
object through a temporary index (`GIT_INDEX_FILE`), so neither the agent's index nor HEAD changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from pm_agent.errors import VcsError
from pm_agent.vcs.diff import DiffLines, parse_unified_diff
from pm_agent.vcs.models import (
    ChangeSet,
    FileChange,
    GitCommandError,
    LogEntry,
    StatusEntry,
    WorktreeInfo,
)

DEFAULT_TIMEOUT_S = 120.0
PROTECTED_BRANCHES: frozenset[str] = frozenset({"main", "master"})
FALLBACK_NAME = "pm-agent"
FALLBACK_EMAIL = "pm-agent@localhost"
# Generated files never staged by pm-agent nor counted as changes (the repository may lack a .gitignore):
# caches and bytecode that running tests and linters leave behind, so a gate run does not change the tree.
GENERATED_EXCLUDES: tuple[str, ...] = (
    ":(exclude,glob)**/__pycache__/**",
    ":(exclude,glob)**/*.pyc",
    ":(exclude,glob)**/*.pyo",
    ":(exclude,glob)**/.pytest_cache/**",
    ":(exclude,glob)**/.mypy_cache/**",
    ":(exclude,glob)**/.ruff_cache/**",
    ":(exclude,glob)**/.hypothesis/**",
    ":(exclude,glob)**/node_modules/.cache/**",
    ":(exclude,glob)**/.coverage",
    ":(exclude,glob)**/.coverage.*",
)
# Inherited from a parent git process (a hook, `git rebase -x`), these would point git elsewhere.
_REPO_LOCATING_VARS = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR", "GIT_PREFIX"}
)
NO_HOOKS_ARGS = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false")


class Git:
    """A git repository or worktree at `path`."""

    def __init__(
        self,
        path: Path | str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        protected_branches: frozenset[str] = PROTECTED_BRANCHES,
    ) -> None:
        self.path = Path(path).resolve()
        self.timeout_s = timeout_s
        self.protected_branches = protected_branches

    def __repr__(self) -> str:
        return f"Git({str(self.path)!r})"

    @classmethod
    def init(cls, path: Path | str, *, initial_branch: str = "main") -> Git:
        """Create a repository at `path` (made if missing) and return it."""
        Path(path).mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.run("init", "-q", f"--initial-branch={initial_branch}")
        return repo

    # ---------------------------------------------------------------- running git

    def try_run(
        self,
        *args: str,
        stdin_text: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run git; return the completed process whatever its exit code. Timeouts raise."""
        inherited = {k: v for k, v in os.environ.items() if k not in _REPO_LOCATING_VARS}
        full_env = {**inherited, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", **(env or {})}
        argv = ["git", "-c", "core.quotepath=off", *args]
        try:
            return subprocess.run(
                argv,
                cwd=self.path,
                input=stdin_text,
                stdin=None if stdin_text is not None else subprocess.DEVNULL,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                env=full_env,
                timeout=timeout_s if timeout_s is not None else self.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise GitCommandError(
                args, None, f"timed out after {exc.timeout}s", cwd=self.path, timed_out=True
            ) from None
        except OSError as exc:
            raise GitCommandError(args, None, str(exc), cwd=self.path) from None

    def run(
        self,
        *args: str,
        stdin_text: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> str:
        """Run git and return its stdout; raise `GitCommandError` on a non-zero exit."""
        proc = self.try_run(*args, stdin_text=stdin_text, env=env, timeout_s=timeout_s)
        if proc.returncode != 0:
            raise GitCommandError(args, proc.returncode, proc.stderr or proc.stdout, cwd=self.path)
        return proc.stdout

    # ---------------------------------------------------------------- reading

    def rev_parse(self, ref: str) -> str:
        """The commit sha `ref` names; VcsError if it names none."""
        proc = self.try_run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        if proc.returncode != 0:
            raise GitCommandError(["rev-parse", ref], proc.returncode, f"unknown revision {ref!r}", cwd=self.path)
        return proc.stdout.strip()

    def head_sha(self) -> str:
        """The sha HEAD points at."""
        return self.rev_parse("HEAD")

    def current_branch(self) -> str | None:
        """The short name of the checked-out branch, None when HEAD is detached."""
        proc = self.try_run("symbolic-ref", "--short", "-q", "HEAD")
        if proc.returncode != 0:
            return None
        return proc.stdout.strip() or None

    def branch_exists(self, name: str) -> bool:
        """Whether `refs/heads/<name>` exists."""
        return self.try_run("show-ref", "--verify", "--quiet", f"refs/heads/{name}").returncode == 0

    def git_path(self, name: str) -> Path:
        """An absolute path inside this worktree's git directory (`git rev-parse --git-path`)."""
        return self.git_paths(name)[0]

    def git_paths(self, *names: str) -> list[Path]:
        """`git_path` for several names in one git call."""
        args = [arg for name in names for arg in ("--git-path", name)]
        outs = self.run("rev-parse", *args).splitlines()
        return [Path(out) if Path(out).is_absolute() else self.path / out for out in outs]

    def status_porcelain(self) -> list[StatusEntry]:
        """`git status --porcelain`, untracked files listed one by one."""
        out = self.run("status", "--porcelain=v1", "-z", "--untracked-files=all")
        entries: list[StatusEntry] = []
        parts = out.split("\0")
        i = 0
        while i < len(parts):
            item = parts[i]
            i += 1
            if len(item) < 4:
                continue
            code, path = item[:2], item[3:]
            if "R" in code or "C" in code:
                i += 1  # the rename source follows
            entries.append(StatusEntry(code=code, path=path))
        return entries

    def is_clean(self) -> bool:
        """No staged, unstaged or untracked (non-ignored) changes."""
        return not self.status_porcelain()

    def file_tree(self, max_files: int = 500) -> list[str]:
        """Tracked and untracked non-ignored files, sorted, at most `max_files` of them."""
        out = self.run("ls-files", "-z", "--cached", "--others", "--exclude-standard")
        files = sorted({p for p in out.split("\0") if p})
        return files[:max_files]

    def log(self, n: int = 20, ref: str = "HEAD") -> list[LogEntry]:
        """The last `n` commits reachable from `ref`, newest first; empty in a repository without commits."""
        if self.try_run("rev-parse", "--verify", "--quiet", ref).returncode != 0:
            return []
        out = self.run("log", f"-n{n}", "--format=%H%x1f%an%x1f%aI%x1f%s%x1e", ref, "--")
        entries = []
        for record in out.split("\x1e"):
            fields = record.strip("\n").split("\x1f")
            if len(fields) == 4:
                entries.append(LogEntry(sha=fields[0], author=fields[1], date=fields[2], subject=fields[3]))
        return entries

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether `ancestor` is reachable from `descendant` (a commit is its own ancestor)."""
        proc = self.try_run("merge-base", "--is-ancestor", ancestor, descendant)
        if proc.returncode in (0, 1):
            return proc.returncode == 0
        raise GitCommandError(
            ["merge-base", "--is-ancestor", ancestor, descendant], proc.returncode, proc.stderr, cwd=self.path
        )

    def commits_since(self, base: str, branch: str) -> list[str]:
        """Shas on `branch` not reachable from `base`, oldest first."""
        out = self.run("rev-list", "--reverse", "--topo-order", f"{base}..{branch}", "--")
        return out.split()

    def show_file(self, ref: str, path: str) -> str:
        """The content of `path` at `ref`."""
        return self.run("show", f"{ref}:{path}")

    # ---------------------------------------------------------------- diffs

    @contextmanager
    def _temp_index(self) -> Iterator[dict[str, str]]:
        """An env pointing GIT_INDEX_FILE at a copy of this worktree's index."""
        with tempfile.TemporaryDirectory(prefix="pm-agent-index-") as tmp:
            index = Path(tmp) / "index"
            real = self.git_path("index")
            env = {"GIT_INDEX_FILE": str(index)}
            if real.exists():
                shutil.copyfile(real, index)
            elif self.try_run("rev-parse", "--verify", "--quiet", "HEAD").returncode == 0:
                self.run("read-tree", "HEAD", env=env)
            yield env

    def worktree_tree(self) -> str:
        """A tree object of the working tree as it is (tracked, untracked, deletions); changes nothing."""
        with self._temp_index() as env:
            self.run("add", "-A", "--", ".", *GENERATED_EXCLUDES, env=env)
            return self.run("write-tree", env=env).strip()

    def _target(self, head: str | None) -> str:
        return head if head is not None else self.worktree_tree()

    def _diff(self, *args: str) -> str:
        return self.run(
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--no-relative",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            *args,
        )

    def diff_name_status(self, base: str, head: str | None = None) -> list[FileChange]:
        """Changed paths and status letters between `base` and `head` (default: the working tree)."""
        out = self._diff("--name-status", "-z", base, self._target(head), "--")
        parts = [p for p in out.split("\0") if p]
        return [FileChange(status=parts[i][0], path=parts[i + 1]) for i in range(0, len(parts) - 1, 2)]

    def diff_names(self, base: str, head: str | None = None) -> list[str]:
        """Changed paths between `base` and `head` (default: the working tree, untracked files included)."""
        return [change.path for change in self.diff_name_status(base, head)]

    def diff_stat(self, base: str, head: str | None = None) -> str:
        """`git diff --stat` between `base` and `head` (default: the working tree)."""
        return self._diff("--stat", base, self._target(head), "--")

    def diff_text(self, base: str, paths: Sequence[str] | None = None, head: str | None = None) -> str:
        """The unified diff between `base` and `head` (default: the working tree), optionally for `paths`."""
        return self._diff(base, self._target(head), "--", *(paths or ()))

    def diff_lines(self, base: str, head: str | None = None) -> DiffLines:
        """Added and removed lines with line numbers (from a `-U0` diff)."""
        return parse_unified_diff(self._diff("-U0", base, self._target(head), "--"))

    def added_lines(self, base: str, head: str | None = None) -> dict[str, list[tuple[int, str]]]:
        """Per path, the lines the change adds, as (line number in the new file, text)."""
        return self.diff_lines(base, head).added

    def changes(self, base: str, head: str | None = None) -> ChangeSet:
        """Changed files plus added and removed lines, all from one snapshot of the target."""
        target = self._target(head)
        lines = self.diff_lines(base, target)
        return ChangeSet(
            base=base,
            target=target,
            files=self.diff_name_status(base, target),
            added=lines.added,
            removed=lines.removed,
        )

    # ---------------------------------------------------------------- branches, worktrees

    def check_writable(self, branch: str | None, action: str = "write to") -> None:
        """Raise VcsError when `branch` is protected (main/master): pm-agent only reads those."""
        if branch is not None and branch in self.protected_branches:
            raise VcsError(f"refusing to {action} protected branch {branch!r} (read only for pm-agent)")

    def create_branch(self, name: str, start: str = "HEAD") -> str:
        """Create branch `name` at `start`; idempotent when it already points there. Returns its sha."""
        self.check_writable(name, "create")
        sha = self.rev_parse(start)
        if self.branch_exists(name):
            existing = self.rev_parse(f"refs/heads/{name}")
            if existing != sha:
                raise VcsError(f"branch {name!r} already exists at {existing[:12]}, not at {sha[:12]}")
            return sha
        self.run("branch", "--no-track", name, sha)
        return sha

    def worktree_add(self, path: Path | str, branch: str, start: str | None = None) -> Git:
        """Check `branch` out in a new worktree at `path`, creating it from `start` if it does not exist.

        Idempotent: a worktree already at `path` on `branch` is returned as is.
        """
        self.check_writable(branch, "check out")
        target = Path(path).resolve()
        for info in self.worktree_list():
            if Path(info.path).resolve() == target:
                if info.branch != branch:
                    raise VcsError(f"{target} is already a worktree on {info.branch or 'a detached HEAD'}")
                return Git(target, timeout_s=self.timeout_s, protected_branches=self.protected_branches)
        if self.branch_exists(branch):
            self.run("worktree", "add", "--quiet", str(target), branch)
        else:
            self.run(
                "worktree",
                "add",
                "--quiet",
                "--no-track",
                "-b",
                branch,
                str(target),
                self.rev_parse(start or "HEAD"),
            )
        return Git(target, timeout_s=self.timeout_s, protected_branches=self.protected_branches)

    def worktree_add_detached(self, path: Path | str, start: str) -> Git:
        """A worktree at `path` with a detached HEAD at `start`."""
        target = Path(path).resolve()
        self.run("worktree", "add", "--quiet", "--detach", str(target), self.rev_parse(start))
        return Git(target, timeout_s=self.timeout_s, protected_branches=self.protected_branches)

    def worktree_remove(self, path: Path | str, force: bool = False) -> None:
        """Remove the worktree at `path` (its branch stays); `force` discards uncommitted changes in it."""
        args = ["worktree", "remove"] + (["--force"] if force else []) + [str(Path(path).resolve())]
        self.run(*args)
        self.run("worktree", "prune")

    def worktree_list(self) -> list[WorktreeInfo]:
        """Every worktree of the repository, the main one first."""
        out = self.run("worktree", "list", "--porcelain")
        infos: list[WorktreeInfo] = []
        for block in out.strip().split("\n\n"):
            fields: dict[str, str] = {}
            for line in block.splitlines():
                key, _, value = line.partition(" ")
                fields[key] = value
            if "worktree" not in fields:
                continue
            branch = fields.get("branch")
            infos.append(
                WorktreeInfo(
                    path=fields["worktree"],
                    head=fields.get("HEAD"),
                    branch=branch.removeprefix("refs/heads/") if branch else None,
                    detached="detached" in fields,
                    bare="bare" in fields,
                    locked="locked" in fields,
                    prunable="prunable" in fields,
                )
            )
        return infos

    # ---------------------------------------------------------------- commits, tags

    def identity_args(self) -> list[str]:
        """`-c user.name/-c user.email` for pm-agent's fallback identity when none is configured."""
        out = self.try_run("config", "--get-regexp", r"^user\.(name|email)$").stdout
        keys = {line.split(" ", 1)[0].lower() for line in out.splitlines() if " " in line}
        configured = all(
            key in keys or os.environ.get(env_key)
            for key, env_key in (("user.name", "GIT_COMMITTER_NAME"), ("user.email", "GIT_COMMITTER_EMAIL"))
        )
        if configured:
            return []
        return ["-c", f"user.name={FALLBACK_NAME}", "-c", f"user.email={FALLBACK_EMAIL}"]

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

    def find_commit_by_trailer(self, ref: str, branch: str = "HEAD", *, key: str = "Refs") -> str | None:
        """The newest commit on `branch` whose message has the line `<key>: <ref>` exactly, or None.

        The commit-idempotency key: look before committing a task (`ref` like "task-7").
        """
        wanted = f"{key}: {ref}"
        branch_sha = self.rev_parse(branch)
        out = self.run("log", "--fixed-strings", f"--grep={wanted}", "--format=%H%x1f%B%x1e", branch_sha, "--")
        for record in out.split("\x1e"):
            sha, _, body = record.strip("\n").partition("\x1f")
            if sha and any(line.strip() == wanted for line in body.splitlines()):
                return sha
        return None

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
        log_path = self.git_path(f"logs/{ref}")
        if not log_path.exists():
            return []
        entries = []
        for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            head, _, msg = line.partition("\t")
            parts = head.split(" ")
            if len(parts) >= 2:
                entries.append(f"{parts[0]} {parts[1]} {msg}")
        return entries

    def reflog_moved(self, ref: str, since_entries: int) -> list[str]:
        """Reflog messages of `ref` recorded after the first `since_entries` entries (empty: not moved)."""
        return [entry.split(" ", 2)[2] for entry in self.reflog_entries(ref)[since_entries:]]


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "FALLBACK_EMAIL",
    "FALLBACK_NAME",
    "GENERATED_EXCLUDES",
    "NO_HOOKS_ARGS",
    "PROTECTED_BRANCHES",
    "ChangeSet",
    "FileChange",
    "Git",
    "GitCommandError",
    "LogEntry",
    "StatusEntry",
    "WorktreeInfo",
]
