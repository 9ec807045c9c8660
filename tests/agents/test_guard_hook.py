"""The PreToolUse hook that keeps a session's writes in its worktree: its rules, and the script as the CLI runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.agents import guard_hook
from pm_agent.agents.guard_hook import Fence, check_bash, check_call, check_file


@pytest.fixture
def fence(tmp_path: Path) -> Fence:
    repo = tmp_path / "repo"
    worktree = repo / ".pm-agent" / "worktrees" / "r1" / "task-1"
    (worktree / "src").mkdir(parents=True)
    (tmp_path / "tmp").mkdir()
    scratch = repo / ".pm-agent" / "agent-home" / "sessions" / "s1" / "tmp"
    return Fence(str(worktree), str(repo), str(repo / ".pm-agent"), [str(tmp_path / "tmp")], [str(scratch)])


def repo_of(fence: Fence) -> str:
    assert fence.checkout is not None
    return fence.checkout


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("{wt}/src/a.py", None),
        ("src/b.py", None),
        ("{repo}/README.md", "is in the main checkout"),
        ("{repo}/.pm-agent/state.db", "is in pm-agent's state folder"),
        ("{wt}/../task-2/x.py", "is in pm-agent's state folder"),
        ("{wt}/.git", "version-control metadata"),
        ("{tmp}/notes.txt", "is outside the worktree"),  # file tools: nothing outside, not even temp
        ("{own}/notes.txt", "is outside the worktree"),
        ("/etc/passwd", "is outside the worktree"),
    ],
)
def test_file_tools_stay_in_the_worktree(fence: Fence, path: str, refused: str | None) -> None:
    target = path.format(wt=fence.worktree, repo=repo_of(fence), tmp=fence.temp[0], own=fence.own[0])
    reason = check_file(fence, fence.worktree, target)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None
        assert refused in reason


@pytest.mark.parametrize(
    ("command", "refused"),
    [
        ("python -m pytest -q", None),
        ("echo x > out.txt && cat out.txt", None),
        ("pytest -q 2>&1 | tee {tmp}/log.txt", None),  # temp folders are fine for Bash
        ("echo x > /dev/null", None),
        ("cat {repo}/README.md", None),  # reading the main checkout is allowed
        ("cp /etc/hostname copied.txt", None),  # a read outside, the write inside
        ("cd src && cd .. && echo x > f.txt", None),
        ("mkdir -p {own}/x && pytest > {own}/x/log && cat {own}/x/log", None),  # the session's own TMPDIR
        ("git log pm/calc/work", None),
        ("git -C {repo} status", None),
        ("git add -A && git commit -qm x", None),  # the agent's own HEAD: the tampering check's business
        ("echo x > {repo}/file", "writes {repo}/file, in the main checkout"),
        ("echo x >> {repo}/README.md", "in the main checkout"),
        ("echo x >& {repo}/f", "in the main checkout"),
        ("echo x | tee -a {repo}/README.md", "in the main checkout"),
        ("cp notes.txt {repo}/", "in the main checkout"),
        ("mv a.txt /opt/a.txt", "outside the worktree"),
        ("timeout 10 rm -f {repo}/README.md", "in the main checkout"),
        ("sudo -n touch {repo}/x", "in the main checkout"),
        ("sed -i s/a/b/ {repo}/README.md", "in the main checkout"),
        ("dd if=/dev/zero of={repo}/blob count=1", "in the main checkout"),
        ("cat <<EOF > {repo}/x\nhello\nEOF", "in the main checkout"),
        ("cd .. && echo x > f.txt", "pm-agent's state folder"),
        ("ls\ncd ..\necho x > f.txt", "pm-agent's state folder"),
        ("cat ../task-2/src/a.py", "pm-agent's state folder"),
        ("sqlite3 {repo}/.pm-agent/state.db 'update tasks set state=1'", "pm-agent's state folder"),
        ("python -c \"import sqlite3; sqlite3.connect('{repo}/.pm-agent/state.db')\"", "pm-agent's state folder"),
        ("git branch -f pm/calc/work HEAD", "pm-agent's ref pm/calc/work"),
        ("git tag -d pm/calc/checkpoint-task-1", "pm-agent's ref"),
        ("git update-ref refs/heads/pm/calc/work HEAD", "pm-agent's ref"),
        ("git push . HEAD:refs/heads/pm/calc/work", "pm-agent's ref"),
        ("git -C {repo} checkout -- README.md", "outside the worktree"),
        ("git --work-tree={repo} checkout -- README.md", "outside the worktree"),
    ],
)
def test_bash_commands_that_obviously_leave_are_refused(fence: Fence, command: str, refused: str | None) -> None:
    text = command.format(repo=repo_of(fence), tmp=fence.temp[0], own=fence.own[0])
    reason = check_bash(fence, fence.worktree, text)
    if refused is None:
        assert reason is None, reason
    else:
        assert reason is not None, text
        assert refused.format(repo=repo_of(fence)) in reason


@pytest.mark.parametrize(
    "command",
    [
        "D={repo}; echo x > $D/file",  # a variable set in the command itself
        "python -c \"import sqlite3; sqlite3.connect('../../../' + 'state.db')\"",  # a path built at run time
        'echo "unbalanced',  # the shell refuses it anyway
    ],
)
def test_what_the_tripwire_cannot_see(fence: Fence, command: str) -> None:
    """Documented gaps: these pass the hook; pm-agent's detection after the session catches their effects."""
    assert check_bash(fence, fence.worktree, command.format(repo=repo_of(fence))) is None


def test_relative_paths_follow_the_call_cwd(fence: Fence) -> None:
    src = str(Path(fence.worktree) / "src")
    assert check_bash(fence, src, "echo x > ../ok.txt") is None
    assert check_bash(fence, src, "echo x > ../../x.txt") is not None
    assert check_call(fence, {"tool_name": "Write", "cwd": src, "tool_input": {"file_path": "../../x.py"}})
    assert check_call(fence, {"tool_name": "Read", "tool_input": {"file_path": "/etc/passwd"}}) is None
    notebook = {"tool_name": "NotebookEdit", "tool_input": {"notebook_path": f"{repo_of(fence)}/n.ipynb"}}
    assert check_call(fence, notebook) is not None


def test_a_symlink_out_of_the_worktree_is_seen_through(fence: Fence) -> None:
    link = Path(fence.worktree) / "escape"
    link.symlink_to(repo_of(fence))
    reason = check_file(fence, fence.worktree, str(link / "README.md"))
    assert reason is not None
    assert "main checkout" in reason


def run_hook(args: list[str], call: dict[str, object]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", guard_hook.__file__, *args],
        input=json.dumps(call),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_script_answers_in_claude_codes_form_and_logs_each_denial(fence: Fence, tmp_path: Path) -> None:
    log = tmp_path / "denials.jsonl"
    args = ["--worktree", fence.worktree, "--checkout", repo_of(fence), "--state", f"{repo_of(fence)}/.pm-agent"]
    args += ["--log", str(log)]
    call = {
        "tool_name": "Bash",
        "tool_use_id": "toolu_1",
        "cwd": fence.worktree,
        "tool_input": {"command": f"echo x > {repo_of(fence)}/README.md", "description": "x"},
    }
    denied = run_hook(args, call)
    assert denied.returncode == 0
    answer = json.loads(denied.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse"
    assert answer["permissionDecision"] == "deny"
    assert "in the main checkout" in answer["permissionDecisionReason"]
    allowed = run_hook(args, {**call, "tool_input": {"command": "echo ok > fine.txt"}})
    assert (allowed.returncode, allowed.stdout) == (0, "")
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 1
    assert lines[0]["tool"] == "Bash"
    assert lines[0]["tool_use_id"] == "toolu_1"
    assert lines[0]["target"].endswith("/README.md")


def test_a_broken_invocation_fails_so_that_onfailure_block_blocks(tmp_path: Path) -> None:
    missing = run_hook([], {"tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert missing.returncode == 1
    garbage = subprocess.run(
        [sys.executable, "-I", "-S", guard_hook.__file__, "--worktree", str(tmp_path)],
        input="{not json",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert garbage.returncode == 1
    assert garbage.stdout == ""
