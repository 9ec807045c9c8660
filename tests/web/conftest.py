"""A real run for the dashboard to show: `pm-agent run` over three LOW note tasks played by the fake agent.

Task 1's agent prints markup (the pages must show it as text), task 2's agent asks the human a question
(needs-user-input: the run ends waiting, with one open escalation and the session to resume), task 3
completes. Built once per session by the real engine, then read by the tests.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pm_agent.store import EscalationStatus, default_store_path, open_store
from pm_agent.testing.notes import fake_launcher, note_script, note_section
from pm_agent.web.app import create_app
from pm_agent.web.auth import load_or_create_token

MARKUP = "<script>alert('pwned')</script>"
QUESTION = "Should note 2 be loud or quiet?"
CONFIG = (
    "agent:\n  binary: {binary}\n  isolated_home: true\n  stuck_after_s: 60\nenvironment:\n  test_command: 'true'\n"
    "final_review:\n  enabled: false\n"
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def pm_agent_exe() -> str:
    found = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


@dataclass
class Project:
    """The repository, its run and the escalation it waits on."""

    repo: Path
    run_id: str
    escalation_id: int
    run_output: str
    markup: str = MARKUP  # what task 1's agent printed and signalled
    question: str = QUESTION  # what task 2's agent asked

    def git(self, *args: str) -> str:
        """`git ARGS` in the repository; its output."""
        return git(self.repo, *args)

    def start(self, *args: str) -> subprocess.Popen[str]:
        """`pm-agent ARGS` in the background, stdout readable line by line."""
        return subprocess.Popen(
            [pm_agent_exe(), *args], cwd=self.repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def pm(self, *args: str, timeout: float = 150) -> subprocess.CompletedProcess[str]:
        """`pm-agent ARGS` in the repository."""
        return subprocess.run(
            [pm_agent_exe(), *args], cwd=self.repo, capture_output=True, text=True, timeout=timeout, check=False
        )


def asking_script() -> dict[str, object]:
    """Task 2: ask the human; resumed (the same session) with the answer, write it into the note and complete."""
    write, complete = note_script(2)["steps"]  # type: ignore[misc]
    ask = {"signal": {"signal": "needs-user-input", "stepId": "task-2", "question": QUESTION, "context": "loud|quiet"}}
    with_answer = {**write, "content": "note 2, as the human said: {prompt}\n"}
    return {"steps": [ask], "resume_steps": [with_answer, complete]}


def make_project(root: Path) -> Path:
    """A repository with the three-task plan and a pm-agent.yaml running the fake agent."""
    fake = fake_launcher(root / "fake-claude")
    scripts = root / "scripts"
    scripts.mkdir()
    first = note_script(1)
    steps = first["steps"]
    assert isinstance(steps, list)
    first["steps"] = [{"text": f"rendering {MARKUP} as text"}, *steps]
    signal = steps[-1]["signal"]
    signal["summary"] = f"wrote note 1 {MARKUP}"
    (scripts / "1.json").write_text(json.dumps(first), encoding="utf-8")
    (scripts / "2.json").write_text(json.dumps(asking_script()), encoding="utf-8")
    (scripts / "3.json").write_text(json.dumps(note_script(3)), encoding="utf-8")
    repo = root / "repo"
    (repo / "docs").mkdir(parents=True)
    sections = "\n".join(note_section(n, scripts / f"{n}.json") for n in (1, 2, 3))
    (repo / "docs" / "notes.md").write_text("# notes\n\n**Goal:** three notes.\n\n" + sections, encoding="utf-8")
    (repo / "README.md").write_text("# notes\n", encoding="utf-8")
    (repo / ".gitignore").write_text(".pm-agent/\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "trunk")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")
    (repo / "pm-agent.yaml").write_text(CONFIG.format(binary=fake), encoding="utf-8")
    return repo


def run_until_waiting(repo: Path) -> Project:
    """`pm-agent run` until it stops for task 2's question (exit code 3)."""
    proc = subprocess.run(
        [pm_agent_exe(), "run", "docs/notes.md", "--no-input"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    store = open_store(default_store_path(repo))
    try:
        run = store.latest_run()
        assert run is not None
        [esc] = store.list_escalations(run.id, EscalationStatus.OPEN)
    finally:
        store.close()
    return Project(repo, run.id, esc.id, proc.stdout)


@pytest.fixture(scope="session")
def waiting_project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The shared run: tasks 1 and 3 done, task 2 waiting for its answer. Tests must not change it."""
    return run_until_waiting(make_project(tmp_path_factory.mktemp("web")))


@pytest.fixture
def unrun_repo(tmp_path: Path) -> Path:
    """The repository before any run."""
    return make_project(tmp_path)


@pytest.fixture
def fresh_project(tmp_path: Path) -> Project:
    """A run of its own, for a test that answers or resumes."""
    return run_until_waiting(make_project(tmp_path))


@pytest.fixture
def client(waiting_project: Project) -> Iterator[TestClient]:
    """An authorised client (the token went in once; the cookie carries it) of the shared run's dashboard."""
    token = load_or_create_token(waiting_project.repo)
    with TestClient(create_app(waiting_project.repo, token, poll_s=0.05)) as test_client:
        assert test_client.get("/", params={"token": token}).status_code == 200
        yield test_client
