"""Claude Code PreToolUse hook that keeps a session's writes inside its worktree (a tripwire).

Run by the CLI before each Write/Edit/MultiEdit/NotebookEdit/Bash call as
`python -I -S guard_hook.py --worktree W [--checkout C] [--state S] [--log L]`, with the call as
one JSON object on stdin. Standard library only, and nothing imported from pm_agent (nor pathlib
or dataclasses, which cost more than the checks), so that the interpreter starts fast with `-S`.

File tools: any path outside the worktree, or a `.git` entry inside it, is denied.
Bash: the raw command string is read with `shlex`, segment by segment, following `cd`:
- write targets (redirects, `tee`, `cp`/`mv`/`ln`/`install` targets, `rm`, `touch`, `mkdir`,
  `truncate`, `sed -i`, `dd of=`, ...) outside the worktree are denied, except the session's own
  scratch folders ($TMPDIR, $XDG_RUNTIME_DIR, which pm-agent puts in its state folder), /dev, and
  /tmp and /var/tmp where they are not inside the main checkout or pm-agent's state;
- any path into pm-agent's state folder (`--state`, e.g. `<repo>/.pm-agent`) that is not inside
  the worktree is denied, read or write (that covers `sqlite3 <state>/state.db`, `cd ..`);
- git commands that would change a `pm/` branch or tag, or that point at another checkout
  (`-C`, `--git-dir`, `--work-tree`) with anything but a read-only subcommand, are denied.
A command that builds its path at run time (`D=/x; echo > $D/f`, `python -c "open('..'+'/f')"`)
is not seen: pm-agent's detection after the session is the guarantee, this hook only a tripwire.

A denial answers in Claude Code's JSON form (exit 0, `permissionDecision: deny`) and appends one
JSON line to `--log`, which pm-agent reads after the session. An unexpected error exits 1: the
session settings mark the hook `onFailure: block`, so a broken hook blocks instead of allowing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from collections.abc import Iterable, Sequence

__all__ = ["Fence", "check_bash", "check_call", "check_file", "main"]

FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
_SEPARATORS = frozenset({";", ";;", "&&", "||", "|", "&", "|&", "\n", "(", ")"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
# Commands whose every non-option argument is written (created, changed or removed).
_WRITE_ALL = frozenset({"rm", "rmdir", "touch", "mkdir", "truncate", "unlink", "shred", "chmod", "chown", "tee"})
# Commands whose last non-option argument is the written target.
_WRITE_LAST = frozenset({"cp", "mv", "ln", "install", "rsync", "scp"})
_WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "nice", "command", "builtin", "exec", "xargs", "timeout"})
_GIT_READ_ONLY = frozenset(
    {
        "status",
        "log",
        "show",
        "diff",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "cat-file",
        "rev-list",
        "merge-base",
        "describe",
        "for-each-ref",
        "blame",
        "grep",
        "shortlog",
        "show-ref",
        "name-rev",
        "whatchanged",
        "help",
        "version",
    }
)
_PM_REF = re.compile(r"(^|[:^~+\s])(refs/(heads|tags)/)?pm/")
_ABS_IN_TEXT = re.compile(r"(?<![\w.~$-])/[^\s'\"`;|&<>()]+")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class Fence:
    """Where a session may write: its worktree; never the main checkout or pm-agent's state.

    Every path is made real (symlinks resolved), as the checks compare real paths.
    """

    __slots__ = ("checkout", "own", "state", "temp", "worktree")

    def __init__(
        self,
        worktree: str,
        checkout: str | None = None,
        state: str | None = None,
        temp: Iterable[str] = (),
        own: Iterable[str] = (),
    ) -> None:
        real = os.path.realpath
        self.worktree = real(worktree)
        self.checkout = real(checkout) if checkout else None
        self.state = real(state) if state else None
        self.temp = tuple(real(t) for t in temp if t)  # shared temp folders: fine unless protected
        self.own = tuple(real(t) for t in own if t)  # the session's scratch folders: always fine

    def inside(self, path: str) -> bool:
        """`path` (real) is the worktree or below it."""
        return _under(path, self.worktree)

    def scratch(self, path: str) -> bool:
        """`path` (real) is in one of the session's own scratch folders."""
        return any(_under(path, t) for t in self.own)

    def protected(self, path: str) -> str | None:
        """What protected place `path` (real) is in, when it is outside the worktree and the scratch folders."""
        if self.inside(path) or self.scratch(path):
            return None
        if self.state and _under(path, self.state):
            return "pm-agent's state folder"
        if self.checkout and _under(path, self.checkout):
            return "the main checkout"
        return None


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _resolve(cwd: str, path: str) -> str:
    path = os.path.expandvars(path)
    if path == "~" or path.startswith("~/"):
        path = os.environ.get("HOME", "~") + path[1:]
    return os.path.realpath(path if path.startswith("/") else f"{cwd}/{path}")


def check_file(fence: Fence, cwd: str, path: str) -> str | None:
    """Why a file-tool write to `path` is refused, or None."""
    real = _resolve(cwd, path)
    if not fence.inside(real):
        where = fence.protected(real)
        return f"{path} is in {where}" if where else f"{path} is outside the worktree"
    if _under(real, fence.worktree.rstrip("/") + "/.git"):
        return f"{path} is version-control metadata"
    return None


def _segments(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"  # an unquoted newline separates commands, as in the shell
    lexer.whitespace_split = True
    lexer.commenters = ""
    segments: list[list[str]] = [[]]
    for token in lexer:
        if token in _SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(token)
    return [s for s in segments if s]


def _split_redirects(tokens: Sequence[str]) -> tuple[list[str], list[str]]:
    """(words, redirect targets): `2>` and `1>>` arrive as a number then the operator."""
    words: list[str] = []
    targets: list[str] = []
    skip = False
    for i, token in enumerate(tokens):
        if skip:
            skip = False
            continue
        if token in _REDIRECTS:
            after = tokens[i + 1] if i + 1 < len(tokens) else ""
            if after and not (token == ">&" and (after.isdigit() or after == "-")):
                targets.append(after)
            skip = True
            continue
        if token in ("<", "<<", "<<<"):
            skip = True
            continue
        if token.isdigit() and i + 1 < len(tokens) and tokens[i + 1] in _REDIRECTS:
            continue
        words.append(token)
    return words, targets


def _command(words: list[str]) -> tuple[str, list[str]]:
    """The command name (after env assignments and wrappers such as `sudo`) and its arguments."""
    i = 0
    while i < len(words) and (_ENV_ASSIGN.match(words[i]) or words[i].rsplit("/", 1)[-1] in _WRAPPERS):
        i += 1
        # the wrapper's own options and numbers (`timeout 10`, `nice -n 5`)
        while i < len(words) and (words[i].startswith("-") or words[i].replace(".", "").isdigit()):
            i += 1
    if i >= len(words):
        return "", []
    return words[i].rsplit("/", 1)[-1], words[i + 1 :]


def _write_targets(name: str, args: list[str]) -> list[str]:
    plain = [a for a in args if not a.startswith("-") or a == "-"]
    if name in _WRITE_ALL:
        return plain
    if name in _WRITE_LAST:
        target = [a[len("--target-directory=") :] for a in args if a.startswith("--target-directory=")]
        for flag in ("-t",):
            if flag in args and args.index(flag) + 1 < len(args):
                target.append(args[args.index(flag) + 1])
        return target or plain[-1:]
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name in ("sed", "perl") and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
        return plain[1:]
    return []


def _check_git(fence: Fence, cwd: str, args: list[str]) -> str | None:
    other_checkout: str | None = None
    i = 0
    while i < len(args) and args[i].startswith("-"):
        flag = args[i]
        value: str | None = None
        if flag in ("-C", "--git-dir", "--work-tree", "-c") and i + 1 < len(args):
            value = args[i + 1]
            i += 1
        elif flag.startswith(("--git-dir=", "--work-tree=")):
            value = flag.split("=", 1)[1]
        if value is not None and flag != "-c":
            real = _resolve(cwd, value)
            if not fence.inside(real):
                other_checkout = value
            if flag == "-C":
                cwd = real
        i += 1
    sub = args[i] if i < len(args) else ""
    rest = args[i + 1 :]
    if sub in _GIT_READ_ONLY:
        return None
    if other_checkout is not None:
        return f"git {sub} on {other_checkout}, outside the worktree"
    named = [a for a in rest if _PM_REF.search(a)]
    if named:
        return f"git {sub} on pm-agent's ref {named[0]}"
    return None


def check_bash(fence: Fence, cwd: str, command: str) -> str | None:
    """Why a Bash command is refused, or None (best effort: see the module docstring)."""
    try:
        segments = _segments(command)
    except ValueError:  # unbalanced quotes: the shell will refuse it too; check the raw text only
        segments = []
    if fence.state:
        for found in _ABS_IN_TEXT.findall(command):
            if fence.protected(os.path.realpath(found)) == "pm-agent's state folder":
                return f"the command names {found} in pm-agent's state folder"
    for tokens in segments:
        words, targets = _split_redirects(tokens)
        name, args = _command(words)
        for word in words:
            if "/" in word or word.startswith(".."):
                if " " in word or "\n" in word:
                    continue  # code or a message, not a path (absolute paths in it were checked above)
                if fence.protected(_resolve(cwd, word)) == "pm-agent's state folder":
                    return f"{word} is in pm-agent's state folder"
        for target in [*targets, *_write_targets(name, args)]:
            reason = _check_target(fence, cwd, target)
            if reason:
                return reason
        if name == "git":
            reason = _check_git(fence, cwd, args)
            if reason:
                return reason
        if name in ("cd", "pushd"):
            dest = next((a for a in args if not a.startswith("-")), "~")
            cwd = _resolve(cwd, dest)
    return None


def _check_target(fence: Fence, cwd: str, target: str) -> str | None:
    if "$" in os.path.expandvars(target):
        return None  # a variable the hook cannot know: left to the detection after the session
    real = _resolve(cwd, target)
    where = fence.protected(real)
    if where:
        return f"writes {target}, in {where}"
    if fence.inside(real) or fence.scratch(real) or real.startswith("/dev/"):
        return None
    if any(_under(real, t) for t in fence.temp):
        return None
    return f"writes {target}, outside the worktree"


def check_call(fence: Fence, call: dict[str, object]) -> str | None:
    """Why the tool call described by the hook's stdin object is refused, or None."""
    tool = str(call.get("tool_name", ""))
    raw_input = call.get("tool_input")
    tool_input = raw_input if isinstance(raw_input, dict) else {}
    cwd = str(call.get("cwd") or fence.worktree)
    if tool in FILE_TOOLS:
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        return check_file(fence, cwd, str(path)) if path else None
    if tool == "Bash":
        return check_bash(fence, cwd, str(tool_input.get("command", "")))
    return None


def _target_of(call: dict[str, object]) -> str:
    raw_input = call.get("tool_input")
    tool_input = raw_input if isinstance(raw_input, dict) else {}
    value = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("command") or ""
    return str(value)[:500]


def _log(path: str, call: dict[str, object], reason: str) -> None:
    line = {
        "at": time.time(),
        "tool": call.get("tool_name"),
        "tool_use_id": call.get("tool_use_id"),
        "target": _target_of(call),
        "reason": reason,
    }
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def _options(argv: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for flag, value in zip(argv[::2], argv[1::2], strict=False):
        found.setdefault(flag.lstrip("-"), []).append(value)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Read one PreToolUse call on stdin; print a deny decision when the call leaves the fence."""
    opts = _options(sys.argv[1:] if argv is None else argv)
    if "worktree" not in opts:
        sys.stderr.write("guard_hook: --worktree is required\n")
        return 1
    own = [*opts.get("temp", []), *(os.environ.get(k, "") for k in ("TMPDIR", "XDG_RUNTIME_DIR"))]
    checkout, state = (next(iter(opts.get(key, [])), None) for key in ("checkout", "state"))
    fence = Fence(opts["worktree"][0], checkout, state, ["/tmp", "/var/tmp"], own)
    call = json.loads(sys.stdin.read() or "{}")
    reason = check_call(fence, call) if isinstance(call, dict) else None
    if reason is None:
        return 0
    message = f"pm-agent refused this call: {reason}. Work only inside your worktree {fence.worktree}."
    for log in opts.get("log", []):
        _log(log, call, reason)
    decision = {"permissionDecision": "deny", "permissionDecisionReason": message, "hookEventName": "PreToolUse"}
    sys.stdout.write(json.dumps({"hookSpecificOutput": decision}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
