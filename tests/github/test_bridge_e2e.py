"""The GitHub bridge end to end: the real `pm-agent` command, the real Claude Code CLI, the fake GitHub server.

A one-task plan whose developer asks a question (needs-user-input). The question appears as a comment on the
task's issue; a reply there (or `/answer` on the run issue) answers it and the same agent session resumes with
that text. Across 502s, a rate-limit window and a kill -9 with resume, every issue and comment exists once.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pm_agent.config import PmConfig, render_config
from pm_agent.store import EscalationStatus, default_store_path, open_store
from pm_agent.store.outbox import Outbox
from pm_agent.testing.fake_github import FakeGitHub
from pm_agent.testing.model_server import ModelServer
from pm_agent.testing.team import ScriptedTeam, Step, line_of, write
from pm_agent.testing.team import signal as signal_step

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PY = sys.executable
QUESTION = "JSON or table?"
ANSWER = "a plain table"
CRITERION = "render(rows) puts each row on its own line"
NOTE = {"summary": "done", "risks": [], "rollback": "git revert"}
DEVELOPER_SESSION = r"pm-agent session: role=developer task=task-1 "
PLAN = f"""\
# calc

### Task 1: Output format

**Files:**
- Create: `src/calc/fmt.py`
- Test: `tests/test_fmt.py`

**Acceptance criteria:**
- {CRITERION}
"""
FMT = '"""fmt."""\n\n\ndef render(rows: list[str]) -> str:\n    return "\\n".join(rows)\n'
TEST_FMT = 'from calc.fmt import render\n\n\ndef test_render() -> None:\n    assert render(["a", "b"]) == "a\\nb"\n'
PYPROJECT = '[project]\nname = "calc"\nversion = "0.0.1"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def scripts() -> dict[tuple[str, str], list[Step]]:
    files = {"src/calc/fmt.py": FMT, "tests/test_fmt.py": TEST_FMT}
    complete = {
        "signal": "complete",
        "summary": "ok",
        "criteriaMapping": [{"criterion": CRITERION, "location": f"src/calc/fmt.py:{line_of(FMT, 'return')}"}],
        "reviewNote": NOTE,
        "filesCreated": sorted(files),
    }
    ask = {"signal": "needs-user-input", "question": QUESTION, "context": "the spec does not say"}
    return {
        ("task-1", "developer"): [signal_step(ask), *(write(p, t) for p, t in files.items()), signal_step(complete)],
        ("*", "reviewer"): [signal_step({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
    }


class World:
    """The target repository, the scripted model, the fake GitHub."""

    def __init__(self, repo: Path, team: ScriptedTeam, server: ModelServer, fake: FakeGitHub) -> None:
        self.repo, self.team, self.server, self.fake = repo, team, server, fake

    def pm(self, *args: str) -> subprocess.Popen[str]:
        exe = shutil.which("pm-agent", path=str(Path(PY).parent))
        assert exe is not None
        return subprocess.Popen([exe, *args, "--no-input", "-C", str(self.repo)], cwd=self.repo,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)  # fmt: skip

    def wait_for(self, what: str, ok: Callable[[], bool], proc: subprocess.Popen[str], timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while not ok():
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                out, _ = proc.communicate()
                pytest.fail(f"no {what} (rc {proc.returncode}):\n{out}")
            time.sleep(0.2)

    def issue(self, title_start: str) -> int:
        [number] = [n for n, i in self.fake.issues.items() if i.title.startswith(title_start)]
        return number

    def comments(self, number: int) -> list[str]:
        return [c.body for c in self.fake.comment_list if c.issue_number == number]

    def escalation_posted(self) -> bool:
        return any("ESCALATION #1" in c.body for c in self.fake.comment_list)


def finish(proc: subprocess.Popen[str], timeout: float = 150) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"pm-agent did not finish in {timeout} s:\n{out}")
    return out


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    team = ScriptedTeam(scripts=scripts())
    remote = tmp_path / "remote.git"  # GitHub's copy of the repository
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    with ModelServer(fallback=team) as server, FakeGitHub("acme/app", git_dir=remote) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("GITHUB_TOKEN", fake.token)
        fake.set_permission("alice", "write")
        fake.set_permission("mallory", "read")
        repo = tmp_path / "calc"
        (repo / "src" / "calc").mkdir(parents=True)
        (repo / "tests").mkdir()
        (repo / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
        (repo / "src" / "calc" / "__init__.py").write_text('"""calc."""\n', encoding="utf-8")
        smoke = "import calc\n\n\ndef test_import() -> None:\n    assert calc.__doc__ == 'calc.'\n"
        (repo / "tests" / "test_smoke.py").write_text(smoke, encoding="utf-8")
        (repo / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
        (repo / "docs" / "plans").mkdir(parents=True)
        (repo / "docs" / "plans" / "calc.md").write_text(PLAN, encoding="utf-8")
        config = PmConfig.model_validate({
            "tester_tiers": [],
            "environment": {"test_command": f"{PY} -m pytest -q -p no:cacheprovider", "gate_timeout_s": 120},
            "agent": {"isolated_home": True, "stuck_after_s": 60, "max_turns": 30, "time_budget_min": 5},
            "github": {"repo": "acme/app", "api_url": fake.url, "poll_interval_s": 0.5},
        })  # fmt: skip
        (repo / "pm-agent.yaml").write_text(render_config(config), encoding="utf-8")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.name", "Test User")
        git(repo, "config", "user.email", "test@example.com")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "initial")
        git(repo, "remote", "add", "origin", str(remote))
        git(repo, "push", "-q", "origin", "main")
        yield World(repo, team, server, fake)


def assert_same_session_resumed_with(w: World, answer: str) -> None:
    with open_store(default_store_path(w.repo)) as store:
        [esc] = store.list_escalations()
        assert (esc.status, esc.answer) == (EscalationStatus.APPLIED, answer)
        dev = [s for s in store.list_sessions(esc.run_id, "1") if s.role == "developer"]
        assert len(dev) == 2, dev
        assert dev[1].resumed_from == dev[0].id == esc.session_id
        assert dev[1].agent_session_id == dev[0].agent_session_id
        assert Outbox(store.engine, store.now).summary(esc.run_id) == (0, None)
        run_id = esc.run_id
    developer = [r for r in w.server.requests if re.search(DEVELOPER_SESSION, r.system_text())]
    assert any(answer in r.last_user_text() for r in developer), "no developer request carried the answer"
    assert all(answer not in r.conversation_text() for r in developer[:1])
    issue = w.fake.issues[w.issue("task-1: ")]
    assert issue.state == "closed"
    assert issue.labels[:3] == ["pm-agent", "tier:normal", "state:completed"]
    assert any("Completed in commit" in b for b in w.comments(issue.number))
    titles = sorted(i.title for i in w.fake.issues.values() if i.pull is None)
    assert titles == sorted([f"pm-agent run {run_id}: calc", "task-1: Output format"])
    escalation_comments = [b for b in w.comments(issue.number) if "ESCALATION #1" in b]
    assert len(escalation_comments) == 1, escalation_comments
    assert not w.fake.calls("PUT", "/merge")


def test_a_reply_answers_the_question_and_the_same_session_resumes(world: World) -> None:
    w = world
    w.fake.fail_next(3, 502)  # GitHub is down when the run starts: the run goes on, the issues come later
    proc = w.pm("run", "docs/plans/calc.md")
    w.wait_for("escalation comment", w.escalation_posted, proc)
    number = w.issue("task-1: ")
    w.fake.add_comment(number, "abort", user="mallory")  # not an answerer: ignored
    w.fake.add_comment(number, ANSWER, user="alice")
    out = finish(proc)
    assert proc.returncode == 0, out
    assert "RELEASE SUMMARY" in out
    assert_same_session_resumed_with(w, ANSWER)
    assert [r.status for r in w.fake.requests[:3]] == [502, 502, 502]
    assert any("answered on GitHub by @alice" in b for b in w.comments(number))
    with open_store(default_store_path(w.repo)) as store:
        run = store.latest_run()
        assert run is not None
        # The release: the working branch pushed as it is here, one pull request into main, its link posted.
        [pull] = [i for i in w.fake.issues.values() if i.pull is not None]
        assert pull.pull is not None
        assert (pull.pull.head, pull.pull.base, pull.pull.merged) == (run.working_branch, "main", False)
        assert w.fake.branch_sha(run.working_branch) == git(w.repo, "rev-parse", run.working_branch).strip()
        assert any(f"Release pull request: #{pull.number}" in b for b in w.comments(w.issue("pm-agent run ")))
        assert w.fake.issues[w.issue("pm-agent run ")].state == "closed"
        ignored = store.events_of_kind(run.id, ["github.comment_ignored"])
        assert [e.payload["author"] for e in ignored] == ["mallory"]


def test_kill_9_then_resume_with_slash_answer_through_a_rate_limit(world: World) -> None:
    w = world
    first = w.pm("run", "docs/plans/calc.md")
    w.wait_for("escalation comment", w.escalation_posted, first)
    first.kill()  # SIGKILL, while the run waits on GitHub for the answer
    first.communicate(timeout=30)
    run_issue = w.issue("pm-agent run ")
    reset = w.fake.rate_limit(8.0)  # longer than the resume takes to reach its first GitHub call
    w.fake.add_comment(run_issue, f"/answer 1 {ANSWER}", user="alice")
    second = w.pm("resume")
    out = finish(second)
    assert second.returncode == 0, out
    assert_same_session_resumed_with(w, ANSWER)
    limited = [r for r in w.fake.requests if r.status == 403]
    assert limited, "the rate-limit window was never hit"
    assert time.time() >= reset
    assert any("answered on GitHub by @alice" in b for b in w.comments(w.issue("task-1: ")))
