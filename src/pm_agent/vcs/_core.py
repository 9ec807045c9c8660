"""`GitCore`: running the git CLI in one repository or worktree, and reading from it.

The mixins in `_diffs`, `_worktrees` and `_commits` build on it; `pm_agent.vcs.git.Git` combines them.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from pm_agent import environ
from pm_agent.errors import VcsError
from pm_agent.vcs import _batch, _spawn
from pm_agent.vcs.models import GitCommandError, LogEntry, StatusEntry

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
# Asked of every task worktree (`git_paths` fetches them together): HEAD, the index (snapshots), the HEAD
# reflog and the in-progress markers (tampering checks), the config files (the committer identity).
_USUAL_GIT_PATHS = (
    "HEAD",
    "index",
    "logs/HEAD",
    "config",
    "config.worktree",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "rebase-merge",
    "rebase-apply",
)
# Where `git rev-parse --git-path` puts these names: the common git directory, or the worktree's own for the
# other usual ones (git's path.c). `_git_dirs` answers for them without a git process; any other name is asked of git.
_COMMON_GIT_PATHS = frozenset({"config", "info/exclude"})
_OWN_GIT_PATHS = frozenset(_USUAL_GIT_PATHS) - _COMMON_GIT_PATHS
# git does not lock its worktree metadata: `worktree add` writes .git/worktrees/<name>/ in steps, and a
# concurrent `worktree list`, `remove` or `prune` reading it half-written fails ("failed to read ...
# commondir"). pm-agent's slots run in threads of one process, so one lock per repository serialises them.
_METADATA_LOCKS: dict[str, threading.RLock] = {}
_METADATA_LOCKS_GUARD = threading.Lock()


def _git_env(inherited: Mapping[str, str]) -> dict[str, str]:
    """The environment of every git call: pm-agent's, less the variables that point git elsewhere."""
    kept = {k: v for k, v in inherited.items() if k not in _REPO_LOCATING_VARS}
    return {**kept, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}


def _git_dirs(worktree: Path) -> tuple[Path, Path] | None:
    """The worktree's own git directory and the common one, found as git finds them from the top of a checkout
    (`.git` a folder, or a file `gitdir: <folder>`; that folder's `commondir` names the common one); None when
    anything is unusual (not the top of a checkout, a file git would refuse, a worktree half made)."""
    dot = worktree / ".git"
    try:
        if dot.is_dir():
            own = dot
        else:
            text = dot.read_text(encoding="utf-8")
            if not text.startswith("gitdir: "):
                return None
            own = worktree / text.removeprefix("gitdir: ").strip()  # a relative gitdir is relative to the worktree
        common = own
        if (own / "commondir").is_file():
            common = own / (own / "commondir").read_text(encoding="utf-8").strip()
        if not (own / "HEAD").is_file() or not (common / "objects").is_dir():
            return None
        return own.resolve(), common.resolve()
    except (OSError, UnicodeDecodeError, ValueError):
        return None


class GitCore:
    """A git repository or worktree at `path`: the git runner and the read-only queries."""

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
        self._common_dir: str | None = None
        self._git_paths: dict[str, Path] = {}

    def _drop_branch(self, name: str) -> bool:
        """Delete branch `name` without a git process where that writes what git would; False: git must do it
        (see `GitCommits._drop_branch`)."""
        return False

    def metadata_lock(self) -> threading.RLock:
        """The lock held while worktrees and branches of this repository (shared by all its worktrees) change."""
        common = str(self.common_dir())
        with _METADATA_LOCKS_GUARD:
            return _METADATA_LOCKS.setdefault(common, threading.RLock())

    def common_dir(self) -> Path:
        """The git directory the repository's worktrees share (asked of git once per handle)."""
        if self._common_dir is None:
            dirs = _git_dirs(self.path)
            if dirs is not None:
                self._common_dir = str(dirs[1])
            else:
                out = self.run("rev-parse", "--path-format=absolute", "--git-common-dir")
                self._common_dir = str(Path(out.strip()).resolve())
        return Path(self._common_dir)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    @classmethod
    def init(cls, path: Path | str, *, initial_branch: str = "main") -> Self:
        """Create a repository at `path` (made if missing) and return it."""
        Path(path).mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.run("init", "-q", f"--initial-branch={initial_branch}")
        return repo

    # -- running git

    def try_run(
        self,
        *args: str,
        stdin_text: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run git; return the completed process whatever its exit code. Timeouts raise."""
        base = environ.derived(_git_env)
        full_env = {**base, **env} if env else base
        try:
            return _spawn.run_git(
                ["-c", "core.quotepath=off", *args],
                cwd=self.path,
                env=full_env,
                stdin_text=stdin_text,
                timeout_s=timeout_s if timeout_s is not None else self.timeout_s,
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

    # -- reading

    def _object(self, revision: str) -> tuple[str, str] | None:
        """(sha, type) of the object `revision` names, None if none: asked of the worktree's batch process
        (`_batch`), or of a `git rev-parse` when that cannot answer."""
        try:
            return _batch.resolve(self.path, revision, lambda: environ.derived(_git_env))
        except OSError:
            proc = self.try_run("rev-parse", "--verify", "--quiet", "--end-of-options", revision)
            if proc.returncode != 0:
                return None
            kind = "commit" if revision.endswith("^{commit}") else "tree" if revision.endswith("^{tree}") else "?"
            return proc.stdout.strip(), kind  # "?": rev-parse does not say; object_type asks

    def object_contents(self, sha: str) -> tuple[str, bytes] | None:
        """(type, content) of the object `sha` names, None if none, read by the batch process; OSError when the
        batch cannot read objects (git before 2.36): the caller asks git itself."""
        return _batch.contents(self.path, sha, lambda: environ.derived(_git_env))

    def object_id(self, revision: str) -> str | None:
        """The sha `revision` names as it is (a tag object stays a tag), None if it names none."""
        found = self._object(revision)
        return None if found is None else found[0]

    def object_type(self, revision: str) -> str | None:
        """The type of the object `revision` names (commit, tree, blob, tag), None if it names none."""
        found = self._object(revision)
        if found is not None and found[1] == "?":  # rev-parse answered: it names a sha, not whether it exists
            proc = self.try_run("cat-file", "-t", found[0])
            return proc.stdout.strip() if proc.returncode == 0 else None
        return None if found is None else found[1]

    def rev_parse(self, ref: str) -> str:
        """The commit sha `ref` names; VcsError if it names none."""
        found = self._object(f"{ref}^{{commit}}")
        if found is None:
            raise GitCommandError(["rev-parse", ref], 1, f"unknown revision {ref!r}", cwd=self.path)
        return found[0]

    def rev_parse_tree(self, ref: str) -> str:
        """The tree object of the commit `ref` names."""
        found = self._object(f"{ref}^{{tree}}")
        if found is None:
            raise GitCommandError(["rev-parse", ref], 128, f"unknown revision {ref!r}", cwd=self.path)
        return found[0]

    def head_sha(self) -> str:
        """The sha HEAD points at."""
        return self.rev_parse("HEAD")

    def current_branch(self) -> str | None:
        """The short name of the checked-out branch, None when HEAD is detached."""
        # HEAD is a file in the worktree's git directory: `ref: refs/heads/<branch>` or a detached sha. Read
        # it (one git call for its path per worktree, see git_paths) instead of a symbolic-ref process per
        # question; anything else (a reftable repository's placeholder, a non-branch ref) asks git.
        try:
            text = self.git_path("HEAD").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError, VcsError):
            text = ""
        if text.startswith("ref: refs/heads/") and text != "ref: refs/heads/.invalid":
            return text.removeprefix("ref: refs/heads/")
        if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
            return None
        proc = self.try_run("symbolic-ref", "--short", "-q", "HEAD")
        if proc.returncode != 0:
            return None
        return proc.stdout.strip() or None

    def branch_exists(self, name: str) -> bool:
        """Whether `refs/heads/<name>` exists."""
        return self._object(f"refs/heads/{name}^{{commit}}") is not None

    def git_path(self, name: str) -> Path:
        """An absolute path inside this worktree's git directory (`git rev-parse --git-path`)."""
        return self.git_paths(name)[0]

    def git_paths(self, *names: str) -> list[Path]:
        """`git_path` for several names in one git call (none when this handle has asked for them all before)."""
        # Where a worktree keeps a file never changes while its `.git` stays the same: ask git once per name
        # and worktree (handles come and go; `_batch` keeps the answers while the `.git` is the same one).
        for name in names:
            if name not in self._git_paths:
                known = _batch.known_git_path(self.path, name)
                if known is not None:
                    self._git_paths[name] = known
        missing = [name for name in dict.fromkeys(names) if name not in self._git_paths]
        if missing and all(n in _OWN_GIT_PATHS or n in _COMMON_GIT_PATHS for n in missing):
            dirs = _git_dirs(self.path)
            if dirs is not None:  # the usual names, read from the `.git` file: no git process (one per task)
                self._common_dir = self._common_dir or str(dirs[1])  # read once: `common_dir` need not again
                for name in [*missing, *(n for n in _USUAL_GIT_PATHS if n not in self._git_paths)]:
                    self._remember_git_path(name, (dirs[0] if name in _OWN_GIT_PATHS else dirs[1]) / name)
                missing = []
        if missing:
            # The paths pm-agent asks for in every task worktree (HEAD, the index, the reflog, the config,
            # the in-progress markers) come along with the first question: one git call per worktree.
            missing += [name for name in _USUAL_GIT_PATHS if name not in self._git_paths and name not in missing]
            args = [arg for name in missing for arg in ("--git-path", name)]
            outs = self.run("rev-parse", *args).splitlines()
            for name, out in zip(missing, outs, strict=True):
                self._remember_git_path(name, Path(out) if Path(out).is_absolute() else self.path / out)
        return [self._git_paths[name] for name in names]

    def _remember_git_path(self, name: str, where: Path) -> None:
        """Keep where git keeps `name`, in this handle and for later handles on the same `.git` (`_batch`)."""
        self._git_paths[name] = where
        _batch.remember_git_path(self.path, name, where)

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
        if self._object(ref) is None:
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

    def _at(self, path: Path | str) -> Self:
        """The same kind of handle, with the same timeout and protected branches, on another worktree."""
        return type(self)(path, timeout_s=self.timeout_s, protected_branches=self.protected_branches)

    # -- rules

    def check_writable(self, branch: str | None, action: str = "write to") -> None:
        """Raise VcsError when `branch` is protected (main/master): pm-agent only reads those."""
        if branch is not None and branch in self.protected_branches:
            raise VcsError(f"refusing to {action} protected branch {branch!r} (read only for pm-agent)")
