"""The dashboard in a browser (Playwright driving Debian's /usr/bin/chromium) during real runs with the real
Claude Code CLI against the scripted model server.

1. `pm-agent run --web`: a card moves from implementing to done without a reload; a needs-user-input
   escalation is answered in the inbox and the same agent session resumes with the answer; a task page
   shows its gate evidence. Screenshots of the board, the inbox and a task page are saved (see SCREENSHOTS_ENV).
2. `pm-agent web` in its own process, restarted while the run goes on: the open page reconnects and its
   card still moves without a reload.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from pm_agent.config import PmConfig, render_config
from pm_agent.store import default_store_path, open_store
from pm_agent.testing.model_server import ModelServer
from pm_agent.testing.team import ScriptedTeam, Step, bash, line_of, write
from pm_agent.testing.team import signal as signal_step

pytestmark = [pytest.mark.claude, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")  # `make pytest` installs Debian's package when it is missing
# The README's screenshots: `PM_AGENT_SCREENSHOTS=docs/screenshots make pytest` refreshes them; otherwise they go to a
# temporary folder, so a test run leaves the checkout as it found it.
SCREENSHOTS_ENV = "PM_AGENT_SCREENSHOTS"
QUESTION = "Tabs or spaces?"
ANSWER = "spaces, four of them"
NOTE = {"summary": "done", "risks": [], "rollback": "git revert"}
README = "# calc\n\nExample: `calc 1 + 2`\n"
EDITORCONFIG = "root = true\n\n[*]\nindent_style = space\nindent_size = 4\n"
PLAN = """\
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


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def pm_agent_exe() -> str:
    found = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


def complete(path: str, content: str, criterion: str, needle: str) -> Step:
    mapping = [{"criterion": criterion, "location": f"{path}:{line_of(content, needle)}"}]
    payload = {"signal": "complete", "summary": "ok", "criteriaMapping": mapping, "reviewNote": NOTE}
    return signal_step({**payload, "filesModified" if path == "README.md" else "filesCreated": [path]})


def wait_for_file(go: Path) -> Step:
    """Task 1's first step: wait until the test creates `go` (a plain `sleep` may be refused by Claude Code)."""
    waits = f"import os, time; [time.sleep(0.2) for _ in iter(lambda: os.path.exists({str(go)!r}), True)]"
    return bash(f"{shlex.quote(sys.executable)} -c {shlex.quote(waits)}")


def scripts(go: Path, ask: bool) -> dict[tuple[str, str], list[Step]]:
    """Task 1 waits for `go`, then completes; task 2 (`ask`) first asks the human and is resumed with the answer.

    Task 1 keeps the run going while the question waits: a run with nothing left but questions stops."""
    question = signal_step({"signal": "needs-user-input", "question": QUESTION, "context": "the plan does not say"})
    return {
        ("task-1", "developer"): [
            wait_for_file(go),
            write("README.md", README),
            complete("README.md", README, "README shows an example", "Example"),
        ],
        ("task-2", "developer"): [
            *([question] if ask else []),
            write(".editorconfig", EDITORCONFIG),
            complete(".editorconfig", EDITORCONFIG, "indent style is spaces", "indent_style"),
        ],
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Proc:
    """A background pm-agent process whose output is collected by a thread."""

    popen: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line)

    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.output())
            if found:
                return found
            assert self.popen.poll() is None or re.search(pattern, self.output()), self.output()
            time.sleep(0.1)
        pytest.fail(f"no {pattern!r} in:\n{self.output()}")

    def finish(self, timeout: float) -> int:
        try:
            code = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            pytest.fail(f"pm-agent did not finish in {timeout} s:\n{self.output()}")
        time.sleep(0.2)  # the pump thread reads the last lines
        if self.popen.stdout is not None:
            self.popen.stdout.close()
        return code


@dataclass
class Calc:
    repo: Path
    plan: Path
    team: ScriptedTeam
    server: ModelServer
    go: Path  # task 1's agent waits until this file exists

    def start(self, *args: str) -> Proc:
        popen = subprocess.Popen(
            [pm_agent_exe(), *args],
            cwd=self.repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        return Proc(popen)


@pytest.fixture
def calc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Calc]:
    """A small repository with the plan and a pm-agent.yaml; the model server plays a ScriptedTeam."""
    team = ScriptedTeam()
    with ModelServer(fallback=team) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        repo = tmp_path / "calc"
        (repo / "docs" / "plans").mkdir(parents=True)
        (repo / "README.md").write_text("# calc\n", encoding="utf-8")
        (repo / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
        plan = repo / "docs" / "plans" / "calc.md"
        plan.write_text(PLAN, encoding="utf-8")
        config = PmConfig.model_validate(
            {
                "max_parallel_agents": 2,
                "tester_tiers": [],
                "final_review": {"enabled": False},
                "environment": {"test_command": "true", "gate_timeout_s": 60},
                "agent": {"isolated_home": True, "stuck_after_s": 60, "max_turns": 30, "time_budget_min": 5},
            }
        )
        (repo / "pm-agent.yaml").write_text(render_config(config), encoding="utf-8")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.name", "Test User")
        git(repo, "config", "user.email", "test@example.com")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "initial")
        yield Calc(repo, plan, team, server, tmp_path / "go")


@pytest.fixture
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), "install Debian's chromium (make pytest does: tests/web/install_chromium.sh)"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield launched
        launched.close()


def open_board(page: Page, address: str) -> str:
    """Open the printed address (token -> cookie), then the run's board; the run id."""
    page.goto(address)
    link = page.locator("table a").first
    expect(link).to_be_visible(timeout=60_000)  # the runs page reloads itself until the run is recorded
    run_id = link.inner_text()
    link.click()
    expect(page.locator("#live")).to_have_text("live", timeout=15_000)
    page.evaluate("window.notReloaded = true")
    return run_id


def card_in(page: Page, group: str, task: str, timeout_s: float) -> None:
    expect(page.locator(f"#col-{group} #card-{task}")).to_be_visible(timeout=timeout_s * 1000)


@pytest.fixture(name="screenshots")
def screenshots_folder(tmp_path: Path) -> Path:
    chosen = os.environ.get(SCREENSHOTS_ENV)
    folder = Path(chosen).resolve() if chosen else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_board_inbox_and_task_page_during_a_run_with_web(calc: Calc, browser: Browser, screenshots: Path) -> None:
    calc.team.scripts = scripts(calc.go, ask=True)
    run = calc.start("run", str(calc.plan), "--web", "--no-input")
    try:
        with_run_web(run, calc, browser, screenshots)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- pm-agent run printed:\n{run.output()}") from exc
    finally:
        if run.popen.poll() is None:
            run.popen.kill()
            run.finish(20)


def with_run_web(run: Proc, calc: Calc, browser: Browser, screenshots: Path) -> None:
    address = run.wait_for(r"dashboard: (http://127\.0\.0\.1:\d+/\?token=\S+)").group(1)
    page = browser.new_context(viewport={"width": 1500, "height": 900}).new_page()
    open_board(page, address)
    board = page.url

    card_in(page, "waiting", "2", 90)
    card_in(page, "implementing", "1", 10)
    page.screenshot(path=str(screenshots / "board.png"), full_page=True)

    page.locator("nav a#nav-inbox").click()
    escalation = page.locator("article.escalation")
    expect(escalation).to_contain_text(QUESTION)
    expect(escalation).to_contain_text("Recommended:")
    page.screenshot(path=str(screenshots / "inbox.png"), full_page=True)
    other = page.context.new_page()  # a second inbox open meanwhile (same cookie)
    other.goto(page.url)
    expect(other.locator("article.escalation")).to_have_count(1)
    escalation.locator("textarea").fill(ANSWER)
    escalation.locator("button").click()
    expect(page.locator(".notice")).to_contain_text("answered")
    expect(page.locator("article.escalation")).to_have_count(0)
    expect(other.locator("article.escalation")).to_have_count(0, timeout=10_000)  # left without a reload
    expect(other.locator("#inbox-live")).to_have_text("An escalation was answered elsewhere.")
    other.close()

    page.goto(board)
    expect(page.locator("#live")).to_have_text("live", timeout=15_000)
    page.evaluate("window.notReloaded = true")
    card_in(page, "implementing", "1", 10)
    calc.go.touch()  # task 1 may finish now
    card_in(page, "done", "2", 90)  # moved by the event stream, after the resumed session completed
    card_in(page, "done", "1", 90)
    assert page.evaluate("window.notReloaded") is True

    code = run.finish(150)
    assert code == 0, run.output()
    store = open_store(default_store_path(calc.repo))
    try:
        run_rec = store.latest_run()
        assert run_rec is not None
        [esc] = store.list_escalations(run_rec.id)
        assert (esc.status.value, esc.answer) == ("applied", ANSWER)
        asked, resumed = [s for s in store.list_sessions(run_rec.id, "2") if s.role == "developer"]
        assert esc.session_id == asked.id
        assert resumed.resumed_from == asked.id
        assert resumed.agent_session_id == asked.agent_session_id  # the same conversation, continued
    finally:
        store.close()
    assert git(calc.repo, "show", f"{run_rec.working_branch}:.editorconfig") == EDITORCONFIG
    answered = [r for r in calc.server.requests if ANSWER in r.last_user_text()]
    assert answered, "no model request carried the answer"

    # The run has ended (and its server with it): `pm-agent web` shows the task page from the store.
    port = free_port()
    web = calc.start("web", "--port", str(port))
    try:
        page.goto(web.wait_for(r"http://127\.0\.0\.1:\d+/\?token=\S+").group(0))  # a cookie per port
        page.goto(f"http://127.0.0.1:{port}/runs/{run_rec.id}/tasks/1")
        gates = page.locator("#gates")
        expect(gates).to_contain_text("3-tests-run", timeout=30_000)
        expect(gates).to_contain_text("pm-agent ran 1 command(s): all passed")
        expect(page.locator("details.gate.fail")).to_have_count(0)
        expect(page.locator("body")).to_contain_text("# Review: task-1")
        page.screenshot(path=str(screenshots / "task.png"), full_page=True)
    finally:
        web.popen.send_signal(signal.SIGINT)
        web.finish(20)


def test_the_page_keeps_working_across_a_server_restart_mid_run(calc: Calc, browser: Browser) -> None:
    calc.team.scripts = scripts(calc.go, ask=False)
    port = free_port()
    web = calc.start("web", "--port", str(port))
    address = web.wait_for(r"http://127\.0\.0\.1:\d+/\?token=\S+").group(0)
    run = calc.start("run", str(calc.plan), "--no-input")  # the loop in another process than the server
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    try:
        open_board(page, address)
        card_in(page, "implementing", "1", 90)

        web.popen.send_signal(signal.SIGINT)
        assert web.finish(20) in (0, 130)
        expect(page.locator("#live")).to_have_text("reconnecting…", timeout=15_000)
        web = calc.start("web", "--port", str(port))
        web.wait_for(r"http://127\.0\.0\.1")
        expect(page.locator("#live")).to_have_text("live", timeout=30_000)
        calc.go.touch()
        card_in(page, "done", "1", 120)  # still moving, on the same page
        card_in(page, "done", "2", 30)
        assert page.evaluate("window.notReloaded") is True
        assert run.finish(150) == 0, run.output()
    finally:
        if run.popen.poll() is None:
            run.popen.kill()
            run.finish(20)
        if web.popen.poll() is None:
            web.popen.send_signal(signal.SIGINT)
            web.finish(20)
