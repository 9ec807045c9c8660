"""Escalations end to end: an agent's needs-user-input reaches a human and the answer resumes its session.

Three ways to answer, each through the real `pm-agent` command and the real Claude Code CLI:
`pm-agent answer` after the run stopped (then `pm-agent resume`), `pm-agent answer` from another
shell while the run keeps working on other tasks, and inline in the terminal (a pseudo-terminal,
so pm-agent uses its TerminalChannel).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pm_agent.config import render_config
from pm_agent.engine.final_review import CONTAINER as FINAL_REVIEW
from pm_agent.store import EscalationRecord, default_store_path, open_store
from pm_agent.testing.scenario import ModelRequest
from pm_agent.testing.team import SIGNAL_TOOL, Step, bash, line_of, write
from pm_agent.testing.team import signal as signal_step

from .conftest import Target, git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

NOTE = {"summary": "done", "risks": [], "rollback": "git revert"}
QUESTION = "JSON or table?"
ANSWER = "a plain table"
CRITERION = "render(rows) puts each row on its own line"
# The header line pm-agent puts in every session's system prompt (the scripted team routes on it).
DEVELOPER_SESSION = r"pm-agent session: role=developer task=task-1 "

PLAN_ONE = """\
# calc

### Task 1: Output format

**Files:**
- Create: `src/calc/fmt.py`
- Test: `tests/test_fmt.py`

**Acceptance criteria:**
- render(rows) puts each row on its own line
"""

FMT = '"""fmt."""\n\n\ndef render(rows: list[str]) -> str:\n    return "\\n".join(rows)\n'
TEST_FMT = 'from calc.fmt import render\n\n\ndef test_render() -> None:\n    assert render(["a", "b"]) == "a\\nb"\n'

PLAN_TWO = """\
# calc

### Task 1: Usage docs in the README

**Tier:** low
**Ownership:** docs

**Files:**
- Modify: `README.md`

**Acceptance criteria:**
- README shows an example

### Task 2: Editor config

**Tier:** low
**Ownership:** config

**Files:**
- Create: `.editorconfig`

**Acceptance criteria:**
- indent style is spaces
"""

README = "# calc\n\nExample: `render(['a', 'b'])`\n"
EDITORCONFIG = "root = true\n\n[*]\nindent_style = space\n"


# ---------------------------------------------------------------- helpers


def ask(question: str = QUESTION) -> Step:
    return signal_step({"signal": "needs-user-input", "question": question, "context": "the spec does not say"})


def complete(files: dict[str, str], criterion: str, path: str, needle: str) -> Step:
    return signal_step(
        {
            "signal": "complete",
            "summary": "ok",
            "criteriaMapping": [{"criterion": criterion, "location": f"{path}:{line_of(files[path], needle)}"}],
            "reviewNote": NOTE,
            "filesCreated": sorted(files),
        }
    )


def work(files: dict[str, str], criterion: str, path: str, needle: str) -> list[Step]:
    return [*(write(p, text) for p, text in files.items()), complete(files, criterion, path, needle)]


def review() -> list[Step]:
    return [signal_step({"signal": "complete", "summary": "approved", "reviewNote": NOTE})]


def one_task_scripts() -> dict[tuple[str, str], list[Step]]:
    files = {"src/calc/fmt.py": FMT, "tests/test_fmt.py": TEST_FMT}
    criterion = CRITERION
    return {
        ("task-1", "developer"): [ask(), *work(files, criterion, "src/calc/fmt.py", "return")],
        ("*", "reviewer"): review(),
    }


def exe() -> str:
    found = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


def pm(repo: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run one short pm-agent command to the end (stdin closed: never a terminal)."""
    return subprocess.run(
        [exe(), *args, "-C", str(repo)],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )


def pm_bg(repo: Path, *args: str) -> subprocess.Popen[str]:
    """Start a long pm-agent command (run, resume) with --no-input."""
    return subprocess.Popen(
        [exe(), *args, "--no-input", "-C", str(repo)],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float) -> str:
    """Wait for a pm_bg process and return its output; kill it (and fail) when it takes too long."""
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"pm-agent did not finish in {timeout} s:\n{out}")
    return out


def prepare(t: Target) -> None:
    (t.repo / "pm-agent.yaml").write_text(render_config(t.config()), encoding="utf-8")
    git(t.repo, "add", "pm-agent.yaml")
    git(t.repo, "commit", "-q", "-m", "pm-agent config")


def escalations_in_store(repo: Path) -> list[EscalationRecord]:
    store = open_store(default_store_path(repo))
    try:
        return store.list_escalations()
    finally:
        store.close()


def refs(t: Target, branch: str) -> list[str]:
    bodies = git(t.repo, "log", "--format=%B%x00", branch).split("\0")
    return sorted(line for body in bodies for line in body.splitlines() if line.startswith("Refs: "))


def assert_all_committed(t: Target, task_ids: list[str]) -> None:
    store = open_store(default_store_path(t.repo))
    try:
        run = store.latest_run()
        assert run is not None
        tasks = [x for x in store.list_tasks(run.id) if x.task_id != FINAL_REVIEW]  # its sessions' record
        assert [(x.task_id, x.state) for x in tasks] == [(tid, "completed") for tid in task_ids]
        assert all(x.commit_sha for x in tasks)
        assert sorted(c.task_id for c in store.commits(run.id)) == task_ids
        expected = sorted([f"Refs: task-{tid}" for tid in task_ids] + ["Refs: release-calc"])
        assert refs(t, run.working_branch) == expected
    finally:
        store.close()


def assert_resumed_developer(t: Target, esc: EscalationRecord) -> None:
    """Task 1's developer asked once, and the answer resumed that same agent session."""
    store = open_store(default_store_path(t.repo))
    try:
        dev = [s for s in store.list_sessions(esc.run_id, "1") if s.role == "developer"]
        assert len(dev) == 2, dev
        assert esc.session_id == dev[0].id
        assert dev[1].resumed_from == dev[0].id, "the answer did not resume the asking session"
        assert dev[0].agent_session_id
        assert dev[1].agent_session_id == dev[0].agent_session_id
    finally:
        store.close()


def asked_in(request: ModelRequest, question: str) -> bool:
    """The request's history holds an assistant turn calling signal_back with `question`."""
    for message in request.messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_use"
                and block.get("name") == SIGNAL_TOOL
                and isinstance(block.get("input"), dict)
                and block["input"].get("question") == question
            ):
                return True
    return False


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def plain(data: bytes) -> str:
    return ANSI.sub("", data.decode("utf-8", "replace")).replace("\r\n", "\n")


# ---------------------------------------------------------------- 1. answer after the run stopped


def test_answer_after_the_run_stopped_then_resume(target: Callable[[str], Target]) -> None:
    t = target(PLAN_ONE)
    t.team.scripts = one_task_scripts()
    prepare(t)

    first = pm_bg(t.repo, "run", str(t.plan))
    out = finish(first, 80)
    assert first.returncode == 3, out
    block = out[out.index("ESCALATION #1") :]
    for line in ("Problem:", "Impact:", "Options:", "Recommended:"):
        assert line in block, out
    assert re.search(r"^Blocking:\s+yes$", block, re.MULTILINE), out
    assert QUESTION in block
    assert 'pm-agent answer 1 "..."' in out
    assert "1 waiting for an answer" in out

    listed = pm(t.repo, "escalations")
    assert listed.returncode == 0, listed.stdout
    assert "ESCALATION #1" in listed.stdout
    assert QUESTION in listed.stdout
    assert "(about task-1; open)" in listed.stdout
    as_json = pm(t.repo, "escalations", "--json")
    assert as_json.returncode == 0, as_json.stdout
    data: list[dict[str, Any]] = json.loads(as_json.stdout)
    assert [(e["id"], e["status"], e["task_id"], e["source"]) for e in data] == [(1, "open", "1", "needs-user-input")]
    assert data[0]["session_id"] is not None

    answered = pm(t.repo, "answer", "1", ANSWER)
    assert answered.returncode == 0, answered.stdout
    assert "escalation #1 answered" in answered.stdout
    again = pm(t.repo, "answer", "1", "JSON after all")
    assert again.returncode != 0, again.stdout
    assert "error:" in again.stdout
    assert "not open" in again.stdout, again.stdout
    unknown = pm(t.repo, "answer", "99", "whatever")
    assert unknown.returncode == 2, unknown.stdout
    assert "error:" in unknown.stdout
    assert "unknown escalation 99" in unknown.stdout, unknown.stdout
    [esc] = escalations_in_store(t.repo)
    assert (esc.status.value, esc.answer) == ("answered", ANSWER), "a refused answer changed the escalation"
    assert pm(t.repo, "escalations").stdout.strip() == "No open escalations."

    second = pm_bg(t.repo, "resume")
    out2 = finish(second, 80)
    assert second.returncode == 0, out2
    assert "RELEASE SUMMARY" in out2
    assert_all_committed(t, ["1"])
    [esc] = escalations_in_store(t.repo)
    assert (esc.status.value, esc.answer) == ("applied", ANSWER)
    assert_resumed_developer(t, esc)

    # The resumed CLI sent its earlier conversation (the question turn) along with the answer.
    developer = [r for r in t.server.requests if re.search(DEVELOPER_SESSION, r.system_text())]
    resumed = [r for r in developer if ANSWER in r.last_user_text()]
    assert resumed, "no developer request carried the answer"
    assert CRITERION in developer[0].last_user_text()
    assert ANSWER not in developer[0].conversation_text()
    for request in resumed:
        assert asked_in(request, QUESTION), "the resumed conversation lost the question turn"
        assert CRITERION in request.conversation_text(), "the resumed conversation lost the task prompt"
        assert CRITERION not in request.last_user_text()


# ---------------------------------------------------------------- 2. answer while the run continues


def test_answer_from_another_shell_while_the_run_continues(target: Callable[[str], Target]) -> None:
    t = target(PLAN_TWO)
    t.team.scripts = {
        ("task-1", "developer"): [
            ask("Which example?"),
            *work({"README.md": README}, "README shows an example", "README.md", "Example"),
        ],
        ("task-2", "developer"): [
            bash("sleep 12"),
            *work({".editorconfig": EDITORCONFIG}, "indent style is spaces", ".editorconfig", "indent_style"),
        ],
        ("*", "reviewer"): review(),
    }
    prepare(t)
    proc = pm_bg(t.repo, "run", str(t.plan))
    try:
        deadline = time.monotonic() + 60
        found: list[EscalationRecord] = []
        while time.monotonic() < deadline and not found and proc.poll() is None:
            time.sleep(0.3)
            if default_store_path(t.repo).exists():
                found = [e for e in escalations_in_store(t.repo) if e.status.value == "open"]
        assert found, "no escalation opened" + (f"; run ended with {proc.returncode}" if proc.poll() else "")
        [esc] = found
        assert esc.task_id == "1"
        assert proc.poll() is None, "the run stopped before the answer"
        answered = pm(t.repo, "answer", str(esc.id), "render two rows")
        assert answered.returncode == 0, answered.stdout
        out = finish(proc, 100)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out
    assert f'pm-agent answer {esc.id} "..."' in out
    assert "RELEASE SUMMARY" in out
    assert_all_committed(t, ["1", "2"])
    [esc] = escalations_in_store(t.repo)
    assert (esc.status.value, esc.answer) == ("applied", "render two rows")
    assert_resumed_developer(t, esc)
    store = open_store(default_store_path(t.repo))
    try:
        resumed = [s for s in store.list_sessions(esc.run_id, "1") if s.role == "developer"][1]
        slow = next(s for s in store.list_sessions(esc.run_id, "2") if s.role == "developer")
        assert slow.ended_at is not None
        assert resumed.started_at < slow.ended_at, "the answer was applied only after the other task's session ended"
    finally:
        store.close()


# ---------------------------------------------------------------- 3. inline answer in a terminal


def read_until(master: int, buf: bytearray, done: Callable[[], bool], deadline: float) -> bool:
    """Read the pty into `buf` until `done()` or end of output (the child closed the terminal).

    False when the deadline passed first.
    """
    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([master], [], [], min(left, 0.5))
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every slave end is closed
            return True
        if not chunk:
            return True
        buf.extend(chunk)
    return True


def run_in_terminal(t: Target, at_prompt: Callable[[int], None], why: str) -> tuple[int, str]:
    """Run `pm-agent run` on a pseudo-terminal; call `at_prompt(master)` once the answer prompt shows.

    Returns (exit code, output without ANSI codes).
    """
    master, slave = pty.openpty()
    buf = bytearray()
    try:
        try:
            proc = subprocess.Popen(
                [exe(), "run", str(t.plan), "-C", str(t.repo)],
                cwd=t.repo,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                close_fds=True,
            )
        finally:
            os.close(slave)
        try:
            prompt = b"Your answer to escalation #1"
            read_until(master, buf, lambda: prompt in buf, time.monotonic() + 60)
            assert prompt in buf, f"no prompt (exit {proc.poll()}):\n{plain(bytes(buf))}"
            assert proc.poll() is None
            at_prompt(master)
            ended = read_until(master, buf, lambda: False, time.monotonic() + 90)
            assert ended, f"pm-agent still running 90 s after {why}:\n{plain(bytes(buf))}"
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        os.close(master)
    return proc.returncode, plain(bytes(buf))


def test_inline_answer_in_the_terminal(target: Callable[[str], Target]) -> None:
    t = target(PLAN_ONE)
    t.team.scripts = one_task_scripts()
    prepare(t)

    def type_answer(master: int) -> None:
        os.write(master, ANSWER.encode() + b"\n")

    code, out = run_in_terminal(t, type_answer, "the answer")
    assert code == 0, out
    assert "ESCALATION #1" in out
    assert QUESTION in out
    assert "RELEASE SUMMARY" in out
    assert_all_committed(t, ["1"])
    [esc] = escalations_in_store(t.repo)
    assert (esc.status.value, esc.answer) == ("applied", ANSWER)
    assert_resumed_developer(t, esc)


def test_terminal_prompt_ends_when_answered_from_another_shell(target: Callable[[str], Target]) -> None:
    """Regression: a pending terminal prompt used to hold the whole loop, ignoring `pm-agent answer`."""
    t = target(PLAN_ONE)
    t.team.scripts = one_task_scripts()
    prepare(t)

    def answer_elsewhere(_master: int) -> None:
        assert pm(t.repo, "answer", "1", ANSWER).returncode == 0

    code, out = run_in_terminal(t, answer_elsewhere, "`pm-agent answer`")
    assert code == 0, out
    assert "(escalation #1 was answered elsewhere)" in out
    assert "RELEASE SUMMARY" in out
    [esc] = escalations_in_store(t.repo)
    assert (esc.status.value, esc.answer) == ("applied", ANSWER)
    assert_resumed_developer(t, esc)


PLAN_CRITICAL = PLAN_ONE.replace("### Task 1: Output format\n", "### Task 1: Output format\n\n**Tier:** critical\n")


def test_release_risk_audit_answered_then_resume(target: Callable[[str], Target]) -> None:
    """Regression: `resume` used to poll forever once a run-level escalation was answered."""
    t = target(PLAN_CRITICAL)
    files = {"src/calc/fmt.py": FMT, "tests/test_fmt.py": TEST_FMT}
    risky = {**NOTE, "risks": ["rows with newlines break the table"]}
    done = signal_step(
        {
            "signal": "complete",
            "summary": "ok",
            "criteriaMapping": [{"criterion": CRITERION, "location": f"src/calc/fmt.py:{line_of(FMT, 'return')}"}],
            "reviewNote": risky,
            "filesCreated": sorted(files),
        }
    )
    t.team.scripts = {
        ("task-1", "developer"): [*(write(p, x) for p, x in files.items()), done],
        ("*", "reviewer"): review(),
    }
    prepare(t)
    first = pm_bg(t.repo, "run", str(t.plan))
    out = finish(first, 180)
    assert first.returncode == 3, out
    [esc] = escalations_in_store(t.repo)
    assert (esc.task_id, esc.source, esc.status.value) == (None, "risk-audit", "open")
    assert "rows with newlines break the table" in esc.problem
    assert pm(t.repo, "answer", str(esc.id), "accept").returncode == 0
    second = pm_bg(t.repo, "resume")
    out2 = finish(second, 120)
    assert second.returncode == 0, out2
    assert "RELEASE SUMMARY" in out2
    store = open_store(default_store_path(t.repo))
    try:
        run = store.latest_run()
        assert run is not None
        assert [(r.description, r.status.value) for r in store.list_risks(run.id)] == [
            ("rows with newlines break the table", "accepted")
        ]
        assert store.get_escalation(esc.id).status.value == "applied"
    finally:
        store.close()
