"""Confining a Claude Code session to its worktree, and reading back what the confinement refused.

`claude_settings` builds the `--settings` object of a session (see shared CLAUDE_CODE.md,
"Confining a session to its worktree (measured)"):

- `permissions.blockWritesOutsideWorkingDirectories`: Write/Edit only inside the cwd (the worktree),
  and never to a Claude Code settings file inside it;
- `Edit(//<abs>)` deny rules: the store and its -wal/-shm, the hook's log, and every top-level entry
  of the main checkout except the one that holds the worktree (worktrees live in `<repo>/.pm-agent/`,
  so a rule on the whole repository would block the worktree too; deny rules beat allow rules).
  The CLI also applies them to the redirects, `tee`, `cp` and `touch` targets it parses in Bash;
- a PreToolUse hook (`guard_hook.py`, `onFailure: block`) on Write/Edit/MultiEdit/NotebookEdit/Bash.

The CLI checks deny rules before hooks and hooks before blockWrites; a refusal by a rule shows only
in the stream (`result.permission_denials`, `system/permission_denied`), a refusal by the hook also
in its log. `collect_denials` merges both into `Denial`s.
"""

from __future__ import annotations

import functools
import json
import shlex
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pm_agent.agents import guard_hook
from pm_agent.agents.base import Confinement, Denial

__all__ = ["HOOK_MATCHER", "claude_settings", "collect_denials", "deny_rules", "hook_command", "stream_denials"]

HOOK_MATCHER = "Write|Edit|MultiEdit|NotebookEdit|Bash"
_RULE_REASON = "refused by the session's permission settings"


def _rule(path: Path, tree: bool = False) -> str:
    # `Edit(//abs)`: a double slash makes the path absolute (one slash is relative to the settings file).
    return f"Edit(/{path}{'/**' if tree else ''})"


def deny_rules(conf: Confinement) -> list[str]:
    """The `permissions.deny` rules of a confined session."""
    rules = [_rule(path) for path in conf.protected]
    if conf.denial_log is not None:
        rules.append(_rule(conf.denial_log))
    entries = _entries(conf.checkout) if conf.checkout is not None else ()
    if entries:
        worktree = conf.worktree.resolve()
        for entry, real, tree in entries:
            if worktree == real or worktree.is_relative_to(real):
                continue  # the entry holding the worktree (`.pm-agent`): its own rules cover its files
            rules.append(_rule(entry, tree=tree))
    return rules


def _entries(checkout: Path) -> tuple[tuple[Path, Path, bool], ...]:
    """The checkout's top-level entries, each resolved and whether it is a directory (not a symlink to one)."""
    try:
        info = checkout.stat()
    except OSError:
        return ()
    return _listed(checkout, info.st_mtime_ns) if stat.S_ISDIR(info.st_mode) else ()


# Every session's settings list the checkout's entries (two sessions a task, ~40 us of system calls an entry); the
# list changes only when the directory does, and an entry added, removed, renamed or re-pointed changes its mtime.
# (On a file system with whole-second times a change in the second of the listing could go unseen until the next
# one: the PreToolUse hook still checks every write against the checkout itself.)
@functools.lru_cache(maxsize=16)
def _listed(checkout: Path, mtime_ns: int) -> tuple[tuple[Path, Path, bool], ...]:
    del mtime_ns  # the key: a changed directory is listed anew
    return tuple(
        (entry, entry.resolve(), entry.is_dir() and not entry.is_symlink()) for entry in sorted(checkout.iterdir())
    )


def hook_command(conf: Confinement, python: str = sys.executable) -> str:
    """The shell command Claude Code runs for the PreToolUse hook (`-I -S`: no site, starts fast)."""
    argv = [python, "-I", "-S", guard_hook.__file__, "--worktree", str(conf.worktree)]
    if conf.checkout is not None:
        argv += ["--checkout", str(conf.checkout)]
    if conf.state_dir is not None:
        argv += ["--state", str(conf.state_dir)]
    if conf.denial_log is not None:
        argv += ["--log", str(conf.denial_log)]
    return shlex.join(argv)


def claude_settings(conf: Confinement, python: str = sys.executable) -> dict[str, Any]:
    """The `--settings` object that confines a Claude Code session to `conf.worktree`."""
    handler = {"type": "command", "command": hook_command(conf, python), "onFailure": "block"}
    return {
        "permissions": {"blockWritesOutsideWorkingDirectories": True, "deny": deny_rules(conf)},
        "hooks": {"PreToolUse": [{"matcher": HOOK_MATCHER, "hooks": [handler]}]},
    }


def _target(tool_input: Any) -> str:
    if not isinstance(tool_input, Mapping):
        return ""
    value = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("command") or ""
    return str(value)[:500]


def stream_denials(event: Mapping[str, Any]) -> list[Denial]:
    """The refusals one stream-json event reports (a `result` event's list, or a `permission_denied`)."""
    if event.get("type") == "result":
        found = event.get("permission_denials")
        if not isinstance(found, list):
            return []
        return [
            Denial(
                tool=str(d.get("tool_name", "")),
                target=_target(d.get("tool_input")),
                by="permission-rules",
                reason=_RULE_REASON,
                tool_use_id=str(d["tool_use_id"]) if d.get("tool_use_id") else None,
            )
            for d in found
            if isinstance(d, Mapping)
        ]
    if event.get("type") == "system" and event.get("subtype") == "permission_denied":
        use_id = event.get("tool_use_id")
        return [
            Denial(
                tool=str(event.get("tool_name", "")),
                target="",
                by="permission-rules",
                reason=str(event.get("decision_reason") or _RULE_REASON),
                tool_use_id=str(use_id) if use_id else None,
            )
        ]
    return []


def _hook_log(path: Path | None) -> list[Denial]:
    if path is None or not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line the agent mangled: the stream still has the refusal
        if isinstance(item, dict):
            use_id = item.get("tool_use_id")
            out.append(
                Denial(
                    tool=str(item.get("tool", "")),
                    target=str(item.get("target", ""))[:500],
                    by="guard-hook",
                    reason=str(item.get("reason", "")),
                    tool_use_id=str(use_id) if use_id else None,
                )
            )
    return out


def collect_denials(from_stream: Iterable[Denial], hook_log: Path | None) -> list[Denial]:
    """Every refusal once (by tool_use_id): the hook's own words first, then the stream's."""
    merged: dict[str, Denial] = {}
    anonymous: list[Denial] = []
    for denial in [*_hook_log(hook_log), *from_stream]:
        if denial.tool_use_id is None:
            anonymous.append(denial)
            continue
        known = merged.get(denial.tool_use_id)
        if known is None:
            merged[denial.tool_use_id] = denial
        elif known.by == "permission-rules" and denial.by == "permission-rules":
            # the result event names the target, a permission_denied event the reason: keep both
            merged[denial.tool_use_id] = Denial(
                known.tool or denial.tool,
                known.target or denial.target,
                known.by,
                denial.reason if known.reason == _RULE_REASON else known.reason,
                known.tool_use_id,
            )
        elif not known.target and denial.target:
            merged[denial.tool_use_id] = Denial(known.tool, denial.target, known.by, known.reason, known.tool_use_id)
    return [*merged.values(), *anonymous]
