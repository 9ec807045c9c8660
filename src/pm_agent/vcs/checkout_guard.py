"""Detect, and undo where safe, what an agent session changed outside its worktree.

Agents work in linked worktrees (`<repo>/.pm-agent/worktrees/<run>/task-<id>`); the main checkout
(the user's own working tree) and the refs pm-agent owns (`refs/heads/pm/*`, `refs/tags/pm/*`: the
working branches and checkpoint tags) are not theirs. This works for any agent CLI, hooks or not:

    guard = CheckoutGuard(repo, quarantine=repo / ".pm-agent" / "quarantine")
    ticket = guard.begin()                    # before the session
    ...                                       # the session runs
    report = guard.check(ticket, "session-7") # after it: compare, restore, report

- Files: `git status` of the main checkout (untracked files one by one) at `begin` and at `check`.
  A path that was clean at the start and is changed now is restored from the recorded HEAD, or
  removed when HEAD never had it; its changed content is first moved to `quarantine/<label>/`, so
  nothing is lost even when it was the user who edited it. A path the user had already changed
  before the session (dirty or untracked) that changed again cannot be told apart: it is left as
  it is and reported as not restored. Ignored files are not watched.
- HEAD: a moved or switched HEAD of the main checkout is reported, never reset (the user's
  branch is theirs); files are then not restored either.
- pm-agent's refs: the guard keeps what pm-agent set them to (`known`, updated by `accept_refs`
  after pm-agent's own moves, under `lock`); any other value is reset to it, a ref pm-agent never
  made is deleted.
- Sessions run in parallel, so a change found after one session may be another's: each change is
  kept as an incident, and every session that was running when it was found is reported with it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pm_agent.errors import VcsError
from pm_agent.vcs._refs import read_refs
from pm_agent.vcs.git import Git

__all__ = ["PM_REF_PREFIXES", "CheckoutGuard", "CheckoutReport", "CheckoutTicket"]

PM_REF_PREFIXES: tuple[str, ...] = ("refs/heads/pm/", "refs/tags/pm/")


class CheckoutTicket(BaseModel):
    """The main checkout as it was when a session started."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    head: str | None
    branch: str | None
    files: dict[str, str]  # path -> status code, size and mtime of every entry dirty at the start
    incidents_seen: int  # how many incidents the guard knew of at the start


@dataclass
class CheckoutReport:
    """What a session changed outside its worktree and what pm-agent did about it."""

    label: str
    changes: list[str] = field(default_factory=list)  # one sentence per change found by this check
    restored: list[str] = field(default_factory=list)
    unrestored: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)  # incidents found by other checks during this session
    quarantine: Path | None = None

    @property
    def escaped(self) -> bool:
        """Something changed outside the worktree while the session ran."""
        return bool(self.changes or self.elsewhere)

    def lines(self) -> list[str]:
        """Every finding as one sentence (what `pm-agent log` and the escalation show)."""
        out = list(self.changes)
        out += [f"found after another session that overlapped this one: {e}" for e in self.elsewhere]
        return out


def _fingerprint(root: Path, path: str, code: str) -> str:
    try:
        st = (root / path).lstat()
    except OSError:
        return f"{code}:missing"
    return f"{code}:{st.st_size}:{st.st_mtime_ns}"


class CheckoutGuard:
    """Watches one main checkout and pm-agent's refs in it; see the module docstring."""

    def __init__(
        self,
        checkout: Path | str,
        quarantine: Path | str,
        *,
        prefixes: tuple[str, ...] = PM_REF_PREFIXES,
        exempt: tuple[str, ...] = (),
    ):
        self.git = Git(checkout)
        self.checkout = self.git.path
        self.quarantine = Path(quarantine)
        self.prefixes = prefixes
        # Paths (files, or folders ending in "/") the user edits while the run goes on: the run's plan.
        self.exempt = exempt
        self.lock = asyncio.Lock()  # pm-agent moves its refs, and the guard restores them, under it
        self.known: dict[str, str] = self.refs()
        self.incidents: list[tuple[str, str]] = []  # (label of the check that found it, summary)

    @classmethod
    def of_worktree(cls, worktree: Path | str, quarantine: Path | str) -> CheckoutGuard | None:
        """The guard of the main checkout `worktree` belongs to; None when it is that checkout (or bare)."""
        try:
            main = Git(worktree).worktree_list()[0]
        except (VcsError, IndexError):
            return None
        if main.bare or Path(main.path).resolve() == Path(worktree).resolve():
            return None
        return cls(main.path, quarantine)

    # ---------------------------------------------------------------- reading

    def refs(self) -> dict[str, str]:
        """pm-agent's refs as they are now: full name -> the object they point at."""
        found = read_refs(self.git.common_dir(), self.prefixes)
        if found is not None:
            return found
        out = self.git.run("for-each-ref", "--format=%(refname) %(objectname)", *self.prefixes)
        return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)

    def _status(self) -> dict[str, str]:
        """Path -> status code; both sides of a rename are listed (the source as `D`)."""
        out = self.git.run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
        entries: dict[str, str] = {}
        for item in out.split("\0"):
            if len(item) >= 4 and not self._exempt(item[3:]):
                entries[item[3:]] = item[:2]
        return entries

    def _exempt(self, path: str) -> bool:
        return any(path == e or (e.endswith("/") and path.startswith(e)) for e in self.exempt)

    def _head(self) -> tuple[str | None, str | None]:
        try:
            return self.git.head_sha(), self.git.current_branch()
        except VcsError:
            return None, None  # no commit yet

    def begin(self) -> CheckoutTicket:
        """Record the main checkout before a session starts."""
        head, branch = self._head()
        files = {path: _fingerprint(self.checkout, path, code) for path, code in self._status().items()}
        return CheckoutTicket(head=head, branch=branch, files=files, incidents_seen=len(self.incidents))

    def accept_refs(self, *names: str | None) -> None:
        """pm-agent itself just moved, made or removed these refs (short or full names): remember them."""
        # Each named ref is asked of the checkout's batch process (what `for-each-ref` lists as its
        # objectname: the object the ref points at), not a `for-each-ref` of every ref per delivery.
        for name in names:
            if not name:
                continue
            full = [name] if name.startswith("refs/") else [f"refs/heads/{name}", f"refs/tags/{name}"]
            for ref in full:
                if not ref.startswith(self.prefixes):
                    continue
                target = self.git.object_id(ref)
                if target is not None:
                    self.known[ref] = target
                else:
                    self.known.pop(ref, None)

    # ---------------------------------------------------------------- after a session

    async def check_after(self, ticket: CheckoutTicket, label: str) -> CheckoutReport:
        """`check` in a worker thread, under `lock` only when a look without it finds something changed.

        Most sessions change nothing outside their worktree; their look does not wait for the other slots' deliveries,
        which move pm-agent's refs under the lock (at 8 slots that wait was ~20 ms of a session's end). A ref pm-agent
        moves during the look reads as a change, and `check` then tells."""
        report = await asyncio.to_thread(self.unchanged, ticket, label)
        if report is not None:
            return report
        async with self.lock:
            return await asyncio.to_thread(self.check, ticket, label)

    def unchanged(self, ticket: CheckoutTicket, label: str) -> CheckoutReport | None:
        """`check`'s report when nothing changed since `ticket` (it reads, never restores: no lock needed); None when
        something may have."""
        known = dict(self.known)  # a copy: deliveries update it meanwhile; refs equal to it are pm-agent's own
        if self._head() != (ticket.head, ticket.branch):
            return None
        now = {path: _fingerprint(self.checkout, path, code) for path, code in self._status().items()}
        if now != ticket.files or self.refs() != known:
            return None
        report = CheckoutReport(label, quarantine=self.quarantine / label)
        report.elsewhere = self._elsewhere(ticket, label)
        return report

    def _elsewhere(self, ticket: CheckoutTicket, label: str) -> list[str]:
        """Incidents other checks found while the session ran."""
        return [f"{who}: {what}" for who, what in self.incidents[ticket.incidents_seen :] if who != label]

    def check(self, ticket: CheckoutTicket, label: str) -> CheckoutReport:
        """Compare with `ticket`, restore what is safe to restore, record and report every change."""
        report = CheckoutReport(label, quarantine=self.quarantine / label)
        head, branch = self._head()
        head_moved = (head, branch) != (ticket.head, ticket.branch)
        if head_moved:
            was = f"{(ticket.head or 'none')[:12]} ({ticket.branch or 'detached'})"
            report.changes.append(f"the main checkout's HEAD moved from {was} to {(head or 'none')[:12]} "
                                  f"({branch or 'detached'})")  # fmt: skip
            report.unrestored.append("the main checkout's HEAD (left as it is: the branch is the user's)")
        now = {path: _fingerprint(self.checkout, path, code) for path, code in self._status().items()}
        for path in sorted(ticket.files.keys() | now.keys()):
            if ticket.files.get(path) != now.get(path):
                self._file(report, path, ticket, head_moved)
        self._refs_back(report)
        if report.changes:
            self.incidents.append((label, "; ".join(report.changes[:3])))
        report.elsewhere = self._elsewhere(ticket, label)
        return report

    def _file(self, report: CheckoutReport, path: str, ticket: CheckoutTicket, head_moved: bool) -> None:
        report.changes.append(f"{path} changed in the main checkout {self.checkout}")
        if path in ticket.files:
            report.unrestored.append(f"{path} (it already had uncommitted changes: left as it is)")
            return
        if head_moved or ticket.head is None:
            report.unrestored.append(f"{path} (left as it is: HEAD moved too)")
            return
        try:
            kept = self._quarantine(report, path)
            if self.git.try_run("cat-file", "-e", f"{ticket.head}:{path}").returncode == 0:
                self.git.run("checkout", ticket.head, "--", f":(literal){path}")
                what = "restored from HEAD"
            else:
                self.git.run("rm", "--cached", "--quiet", "--ignore-unmatch", "--", f":(literal){path}")
                what = "removed"
        except (OSError, VcsError) as exc:
            report.unrestored.append(f"{path} (could not restore it: {exc})")
            return
        report.restored.append(f"{path} {what}" + (f"; what was written is kept in {kept}" if kept else ""))

    def _quarantine(self, report: CheckoutReport, path: str) -> Path | None:
        source = self.checkout / path
        if not os.path.lexists(source) or report.quarantine is None:
            return None
        target = report.quarantine / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(source, target)
        return target

    def _refs_back(self, report: CheckoutReport) -> None:
        now = self.refs()
        for ref in sorted(self.known.keys() | now.keys()):
            want, have = self.known.get(ref), now.get(ref)
            if want == have:
                continue
            if want is None:
                report.changes.append(f"pm-agent's ref {ref} was created at {str(have)[:12]}")
                args = ["update-ref", "-d", ref]
            elif have is None:
                report.changes.append(f"pm-agent's ref {ref} was deleted (it was at {want[:12]})")
                args = ["update-ref", ref, want]
            else:
                report.changes.append(f"pm-agent's ref {ref} was moved from {want[:12]} to {have[:12]}")
                args = ["update-ref", ref, want]
            proc = self.git.try_run(*args)
            if proc.returncode == 0:
                report.restored.append(f"{ref} " + ("deleted" if want is None else f"reset to {want[:12]}"))
            else:
                report.unrestored.append(f"{ref} (could not reset it: {proc.stderr.strip()[:200]})")
