"""`pm-agent run` and `resume` as users run them, over several processes and over time.

Two runs at once, a second run of a finished plan, a stop by SIGINT or SIGTERM and the resume that
finishes the run, a resume after pm-agent.yaml was fixed. The agent is the fast fake agent
(`pm_agent.testing.fake_agent`, a real process speaking Claude Code's stream-json and calling
signal_back over real MCP), put in place of Claude Code through `agent.binary`; each task's script
is named in the task's steps, which reach the agent in its prompt.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.model_server import Fail, ModelServer
from pm_agent.testing.notes import fake_launcher, note_script, note_section

pytestmark = pytest.mark.slow


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def exe() -> str:
    found = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


@dataclass
class Project:
    """A repository with a plan of LOW note tasks and a pm-agent.yaml that runs the fake agent."""

    repo: Path
    go: Path  # scripts that wait block until this file exists
    tasks: int

    def pm(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [exe(), *args], cwd=self.repo, capture_output=True, text=True, timeout=timeout, check=False
        )

    def start(self, *args: str, code: str | None = None) -> subprocess.Popen[str]:
        """`pm-agent run` in the background (by `python -c code` when given), output to a file (read with `output`)."""
        command = [exe()] if code is None else [sys.executable, "-c", code]
        log = (self.repo.parent / "run.out").open("w", encoding="utf-8")
        try:
            return subprocess.Popen(
                [*command, "run", "docs/notes.md", "--no-input", *args],
                cwd=self.repo,
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
            )
        finally:
            log.close()

    def wait_for_agent(self, proc: subprocess.Popen[str], timeout: float = 60) -> None:
        """Until task 1's agent is at work (waiting for `go`)."""
        deadline = time.monotonic() + timeout
        while not Path(f"{self.go}.waiting").exists():
            assert proc.poll() is None, f"pm-agent ended early:\n{self.output()}"
            assert time.monotonic() < deadline, f"task 1's agent never started:\n{self.output()}"
            time.sleep(0.1)

    def processes_inside(self) -> list[str]:
        """Command lines of live processes working in the repository or its worktrees (agents, their tools)."""
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and (entry / "cwd").readlink().is_relative_to(self.repo):
                    found.append((entry / "cmdline").read_text(errors="replace").replace("\0", " "))
            except OSError:
                continue
        return found

    def output(self) -> str:
        return (self.repo.parent / "run.out").read_text(encoding="utf-8")

    def refs(self, branch: str = "pm/notes/work") -> list[str]:
        return [line for line in git(self.repo, "log", "--format=%B", branch).splitlines() if line.startswith("Refs:")]

    def commit_of(self, ref: str) -> str:
        return git(
            self.repo, "log", "-n1", "--format=%H", "--fixed-strings", f"--grep=Refs: {ref}", "pm/notes/work"
        ).strip()

    def events(self, kind: str) -> list[dict[str, object]]:
        store = open_store(default_store_path(self.repo))
        try:
            run = store.latest_run()
            assert run is not None
            return [e.payload for e in store.events(run.id) if e.kind == kind]
        finally:
            store.close()


CONFIG = (
    "agent:\n  binary: {binary}\n  isolated_home: true\n  stuck_after_s: 60\nenvironment:\n  test_command: 'true'\n"
    "final_review:\n  enabled: false\n"  # the fake agent's note scripts have no final reviewer
)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """Two LOW tasks; task 1 waits for the `go` file, task 2 does not. pm-agent.yaml is left uncommitted."""
    fake = fake_launcher(tmp_path / "fake-claude")
    go = tmp_path / "go"
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "1.json").write_text(json.dumps(note_script(1, wait_for=go)), encoding="utf-8")
    (scripts / "2.json").write_text(json.dumps(note_script(2)), encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    plan = (
        "# notes\n\n**Goal:** two notes.\n\n"
        + note_section(1, scripts / "1.json")
        + "\n"
        + note_section(2, scripts / "2.json")
    )
    (repo / "docs" / "notes.md").write_text(plan, encoding="utf-8")
    (repo / "README.md").write_text("# notes\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "trunk")  # not main: the handoff must name the real base branch
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "plan")
    # Uncommitted on purpose: right after `pm-agent init` it is, and pm-agent reads it from disk itself.
    (repo / "pm-agent.yaml").write_text(CONFIG.format(binary=fake), encoding="utf-8")
    return Project(repo, go, 2)


def test_two_runs_at_once_the_second_is_refused_naming_the_first(project: Project) -> None:
    first = project.start()
    try:
        project.wait_for_agent(first)
        second = project.pm("run", "docs/notes.md", "--no-input")
        resume = project.pm("resume", "--no-input")
        watch = project.pm("status")
        project.go.touch()
        assert first.wait(timeout=120) == 0, project.output()
    finally:
        first.kill()
        first.wait(timeout=10)
    for refused in (second, resume):
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert f"another pm-agent run is working on this repository (pid {first.pid} since" in refused.stderr
        assert f"watch it with `pm-agent status -C {project.repo}`" in refused.stderr
    assert "session.started" not in second.stdout
    assert f"pm-agent run is working now (pid {first.pid})" in watch.stdout
    assert "pm-agent run is working now" not in project.pm("status").stdout
    assert sorted(project.refs()) == ["Refs: release-notes", "Refs: task-1", "Refs: task-2"]
    runs = open_store(default_store_path(project.repo))
    try:
        assert len(runs.list_runs()) == 1, "the refused run left no run record"
    finally:
        runs.close()


def test_a_second_run_of_a_completed_plan_skips_what_the_branch_has(project: Project) -> None:
    project.go.touch()
    first = project.pm("run", "docs/notes.md", "--no-input")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "review the working branch pm/notes/work, then merge it into trunk yourself" in first.stdout
    assert "into main" not in first.stdout
    commits = {ref: project.commit_of(ref) for ref in ("task-1", "task-2")}
    (project.repo / "scratch.txt").write_text("mine\n", encoding="utf-8")
    refused = project.pm("run", "docs/notes.md", "--no-input")
    assert refused.returncode == 2
    assert "uncommitted changes: scratch.txt." in refused.stderr
    again = project.pm("run", "docs/notes.md", "--no-input", "--allow-dirty")
    assert again.returncode == 0, again.stdout + again.stderr
    out = again.stdout
    assert "--allow-dirty: agents work from HEAD and will not see 1 uncommitted file(s): scratch.txt" in out
    assert "working branch pm/notes/work already has 2 of 2 tasks committed (task-1, task-2): they are EXISTS" in out
    assert f"commit {commits['task-1'][:12]} on the working branch pm/notes/work carries 'Refs: task-1'" in out
    assert "session.started" not in out, "no agent redoes a task the branch has"
    assert sorted(r for r in project.refs() if "task-" in r) == ["Refs: task-1", "Refs: task-2"]
    manifest = git(project.repo, "show", "pm/notes/work:docs/releases/notes-release.yaml")
    for ref in ("task-1", "task-2"):
        assert f"commit_sha: {commits[ref]}" in manifest, "the manifest keeps the commits of the first run"


def test_a_second_plan_with_the_same_task_ids_after_the_first_was_merged(project: Project, tmp_path: Path) -> None:
    # The usual second plan: the first plan's branch merged, a new plan whose tasks are numbered from 1 again.
    # Trunk now holds `Refs: task-1` and `task-2` commits; they are the first plan's, and this run's tasks are
    # done by their agents and committed, not taken as done.
    project.go.touch()
    first = project.pm("run", "docs/notes.md", "--no-input")
    assert first.returncode == 0, first.stdout + first.stderr
    git(project.repo, "merge", "-q", "pm/notes/work")
    scripts = tmp_path / "second-scripts"
    scripts.mkdir()
    sections = []
    for n in (1, 2):
        script = json.dumps(note_script(n)).replace(f"notes/n{n}.md", f"other/o{n}.md")
        (scripts / f"{n}.json").write_text(script, encoding="utf-8")
        sections.append(note_section(n, scripts / f"{n}.json").replace(f"notes/n{n}.md", f"other/o{n}.md"))
    (project.repo / "docs" / "second.md").write_text("# second\n\n**Goal:** more notes.\n\n" + "\n".join(sections))
    git(project.repo, "add", "docs/second.md")
    git(project.repo, "commit", "-q", "-m", "second plan")
    second = project.pm("run", "docs/second.md", "--no-input")
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("session.started") >= 2, "each task of the second plan had its agent"
    for n in (1, 2):
        assert git(project.repo, "show", f"pm/second/work:other/o{n}.md") == f"note {n}\n"
    refs = [r for r in project.refs("pm/second/work") if "task-" in r]
    assert sorted(refs) == ["Refs: task-1", "Refs: task-1", "Refs: task-2", "Refs: task-2"], "both plans' commits"


def test_the_same_plan_grown_after_its_branch_was_merged_starts_from_the_code_as_it_is_now(
    project: Project, tmp_path: Path
) -> None:
    # The plan's branch merged, the user's own work on top, a task added to the same plan: tasks 1 and 2 are
    # taken over, and task 3 starts from trunk as it is now (with the user's file), not from the old tip.
    project.go.touch()
    assert project.pm("run", "docs/notes.md", "--no-input").returncode == 0
    git(project.repo, "merge", "-q", "--no-ff", "-m", "merge the notes", "pm/notes/work")
    (project.repo / "MINE.md").write_text("the user's\n", encoding="utf-8")
    git(project.repo, "add", "MINE.md")
    git(project.repo, "commit", "-q", "-m", "the user's own work")
    script = tmp_path / "scripts" / "3.json"
    script.write_text(json.dumps(note_script(3)), encoding="utf-8")
    plan = project.repo / "docs" / "notes.md"
    plan.write_text(plan.read_text(encoding="utf-8") + "\n" + note_section(3, script), encoding="utf-8")
    git(project.repo, "commit", "-qam", "task 3")
    trunk = git(project.repo, "rev-parse", "HEAD").strip()
    again = project.pm("run", "docs/notes.md", "--no-input")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "working branch pm/notes/work was already merged here" in again.stdout
    assert "already has 2 of 3 tasks committed" in again.stdout
    assert again.stdout.count("session.started") == 1, "only task 3 had an agent"
    git(project.repo, "merge-base", "--is-ancestor", trunk, "pm/notes/work")  # raises when trunk is not in it
    assert git(project.repo, "show", "pm/notes/work:MINE.md") == "the user's\n"
    assert git(project.repo, "show", "pm/notes/work:notes/n3.md") == "note 3\n"


def test_a_new_plan_in_a_file_of_the_same_name_is_refused_while_the_old_branch_is_there(project: Project) -> None:
    # Same file name, so the same plan id and working branch, other tasks: taking the branch over would mark them
    # done on the old plan's commits. The run refuses before it stores anything and says what to do.
    project.go.touch()
    assert project.pm("run", "docs/notes.md", "--no-input").returncode == 0
    plan = project.repo / "docs" / "notes.md"
    plan.write_text(plan.read_text(encoding="utf-8").replace("Note 1", "Billing page"), encoding="utf-8")
    git(project.repo, "commit", "-qam", "the next plan")
    refused = project.pm("run", "docs/notes.md", "--no-input")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "the working branch pm/notes/work holds another plan's commits" in refused.stderr
    assert "this plan's task-1 is 'Billing page'" in refused.stderr
    assert "git branch -m pm/notes/work pm/notes/work-old" in refused.stderr
    store = open_store(default_store_path(project.repo))
    try:
        assert len(store.list_runs()) == 1, "the refused run stored nothing"
    finally:
        store.close()


# `pm-agent run`, noting in `marker` when detect-secrets' plugins are loaded (a thread looks every 20 ms): the
# secrets gate's configuration imports them all (by importlib: no audit event); redaction two others only.
IMPORT_WATCH = """import sys, threading, time
def _watch():
    for _ in range(10_000):  # 200 s at most
        if "detect_secrets.plugins.stripe" in sys.modules:
            open({marker!r}, "a").close()
            return
        time.sleep(0.02)
threading.Thread(target=_watch, daemon=True).start()
from pm_agent.cli import main
sys.argv[0] = "pm-agent"
sys.exit(main())
"""


def test_the_secret_scanner_is_made_ready_while_the_first_agent_works(project: Project, tmp_path: Path) -> None:
    """detect-secrets' imports and configuration (~90 ms of CPU, requests' among them) are made in the background
    once the first agent works, not by the first tasks' gates between their signal and the next dispatch."""
    (project.repo / "docs" / "notes.md").write_text(
        "# notes\n\n**Goal:** one note.\n\n" + note_section(1, tmp_path / "scripts" / "1.json"), encoding="utf-8"
    )
    git(project.repo, "commit", "-q", "-am", "one task: no other task's gates run while it works")
    marker = tmp_path / "imported"
    run = project.start(code=IMPORT_WATCH.format(marker=str(marker)))
    try:
        project.wait_for_agent(run)
        deadline = time.monotonic() + 30
        while not marker.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        imported = marker.exists()
        project.go.touch()
        assert run.wait(timeout=120) == 0, project.output()
    finally:
        run.kill()
        run.wait(timeout=10)
    assert imported, "the scanner was ready before any gate ran, while the only agent still worked"
    assert sorted(project.refs()) == ["Refs: release-notes", "Refs: task-1"]


def _real_cli(project: Project, *, isolated: bool, slots: int = 1) -> dict[str, str]:
    """pm-agent.yaml for the claude-agent-sdk wheel's Claude Code; pm-agent's environment without any ANTHROPIC_* or
    CLAUDE_* variable (no key: the CLI is logged out)."""
    (project.repo / "pm-agent.yaml").write_text(
        f"agent:\n  isolated_home: {str(isolated).lower()}\nmax_parallel_agents: {slots}\n"
        "environment:\n  test_command: 'true'\nfinal_review:\n  enabled: false\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env["HOME"] = str(project.repo.parent / "home")  # no login of this machine's user can reach the CLI
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # nothing listens: no request may leave this machine
    return env


def _run(project: Project, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [exe(), "run", "docs/notes.md", "--no-input"],
        cwd=project.repo,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def _stopped(project: Project) -> tuple[Any, list[Any], list[Any], list[str], list[Any]]:
    """The latest run, its sessions, escalations, dispatched task ids and session.held events."""
    store = open_store(default_store_path(project.repo))
    try:
        run = store.latest_run()
        assert run is not None
        events = store.events(run.id)
        dispatched = [e.task_id for e in events if e.kind == "slot.dispatched" and e.task_id is not None]
        held = [e for e in events if e.kind == "session.held"]
        return run, store.list_sessions(run.id), store.list_escalations(run.id), dispatched, held
    finally:
        store.close()


@pytest.mark.parametrize("isolated", [True, False])
def test_a_logged_out_agent_cli_stops_the_run_before_anything_is_written(project: Project, isolated: bool) -> None:
    """The real Claude Code CLI, logged out: `claude auth status` says so before the run starts; exit 2, no state, no
    branch, and the fix fits the configuration (an isolated HOME never sees the user's own login)."""
    (project.repo.parent / "home").mkdir()
    status_before = git(project.repo, "status", "--porcelain")
    result = _run(project, _real_cli(project, isolated=isolated))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "agent: Claude Code (" in result.stderr
    assert "is not logged in (`claude auth status`: loggedIn false, authMethod none)" in result.stderr
    assert "pm-agent.yaml:1: " in result.stderr, "the error names the agent section"
    if isolated:
        assert "agent.isolated_home is true, so sessions get their own HOME" in result.stderr
        assert "ANTHROPIC_API_KEY" in result.stderr
    else:
        assert "log it in (run `claude`, then /login), or export ANTHROPIC_API_KEY" in result.stderr
        assert "`claude setup-token` as CLAUDE_CODE_OAUTH_TOKEN" in result.stderr
    assert not (project.repo / ".pm-agent").exists(), "nothing written: no state, no agent home"
    assert git(project.repo, "branch", "--list", "pm/*") == ""
    assert git(project.repo, "status", "--porcelain") == status_before
    assert "session" not in result.stdout, "no session started"


def test_a_request_with_a_logged_out_agent_cli_stops_before_anything_is_written(project: Project) -> None:
    """The front door (`pm-agent new`) asks the same question before its analyst would start."""
    (project.repo.parent / "home").mkdir()
    env = _real_cli(project, isolated=False)
    result = subprocess.run(
        [exe(), "new", "a CSV export of the notes", "--no-input"], cwd=project.repo, capture_output=True, text=True,
        timeout=120, check=False, env=env,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "is not logged in (`claude auth status`: loggedIn false, authMethod none)" in result.stderr
    assert not (project.repo / ".pm-agent").exists()
    assert git(project.repo, "branch", "--list", "pm/*") == ""
    assert not (project.repo / "docs" / "plans").exists()


def test_an_agent_whose_key_is_refused_stops_the_run_with_one_escalation(project: Project) -> None:
    """The real Claude Code CLI with a key the API refuses (401 authentication_error), two slots for the two tasks:
    logged in as far as `auth status` can tell, so the run starts; its sessions fail (authentication_failed), and then
    no retries of the same failure, no further dispatch, one escalation with what the CLI said and the fix, whichever
    slots met it; the run waits (exit 3) with both tasks left for the resume."""
    env = _real_cli(project, isolated=True, slots=2)
    with ModelServer(fallback=lambda request: Fail(401, "invalid x-api-key")) as server:
        env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="revoked-key")
        result = _run(project, env)
        requests = len(server.requests)
    assert result.returncode == 3, result.stdout + result.stderr
    run, sessions, escalations, dispatched, held = _stopped(project)
    assert requests >= 1, "the sessions asked the model"
    # Both slots usually start before the first failure comes back; then the second waits on the first's escalation.
    assert sorted(dispatched) in (["1"], ["2"], ["1", "2"])
    assert sorted(s.task_id for s in sessions) == sorted(dispatched), "one session per dispatch, no retry"
    assert {s.status.value for s in sessions} == {"crashed"}
    assert len(held) == len(sessions) - 1
    assert [e.source for e in escalations] == ["agent-account"], "one escalation for the account, not one per slot"
    problem = escalations[0].problem
    assert f"task-{escalations[0].task_id}: the developer agent cannot work: its CLI says 'Invalid API key" in problem
    assert "(authentication_failed)" in problem
    assert "ANTHROPIC_API_KEY" in result.stdout
    assert "0 blocked, 0 errors, 1 left for resume (the run stopped dispatching)" in result.stdout
    # The answer is given, and the key removed instead of fixed: resume asks the CLI first, and stops before a session.
    assert project.pm("answer", str(escalations[0].id), "retry").returncode == 0
    env.pop("ANTHROPIC_API_KEY")
    resumed = subprocess.run(
        [exe(), "resume", "--no-input"], cwd=project.repo, capture_output=True, text=True, timeout=120, env=env
    )
    assert resumed.returncode == 2, resumed.stdout + resumed.stderr
    assert "is not logged in (`claude auth status`: loggedIn false" in resumed.stderr
    store = open_store(default_store_path(project.repo))
    try:
        assert len(store.list_sessions(run.id)) == len(sessions), "no session started"
        assert store.get_run(run.id).status == run.status, "the run's state untouched"
    finally:
        store.close()


# What Claude Code prints when the API refuses its key (measured with the wheel's CLI against a 401): an assistant
# message that says authentication_failed, then an error result, exit 1.
REFUSED_TEXT = "Invalid API key · Fix external API key"
REFUSED = [
    {"print": json.dumps({"type": "assistant", "error": "authentication_failed", "message": {"role": "assistant",
                                                                                           "content": REFUSED_TEXT}})},
    {"print": json.dumps({"type": "result", "subtype": "success", "is_error": True, "result": REFUSED_TEXT})},
    {"exit": 1},
]


def test_after_the_one_account_escalation_is_answered_resume_finishes_every_task(project: Project) -> None:
    """Both slots' agents fail as a refused key does: one escalation; once the key works, one answer and one resume
    finish both tasks, the one that escalated and the one that waited on it."""
    scripts = project.repo.parent / "scripts"
    (project.go).touch()
    for n in (1, 2):
        (scripts / f"{n}.json").write_text(json.dumps({"steps": REFUSED}), encoding="utf-8")
    first = project.pm("run", "docs/notes.md", "--no-input")  # three slots (the default) for the two tasks
    assert first.returncode == 3, first.stdout + first.stderr
    _, sessions, escalations, _, held = _stopped(project)
    assert [e.source for e in escalations] == ["agent-account"]
    assert REFUSED_TEXT in escalations[0].problem
    assert len(held) == len(sessions) - 1
    assert "0 blocked, 0 errors" in first.stdout
    for n in (1, 2):  # the key works again
        (scripts / f"{n}.json").write_text(json.dumps(note_script(n)), encoding="utf-8")
    assert project.pm("answer", str(escalations[0].id), "retry").returncode == 0
    resumed = project.pm("resume", "--no-input")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "2 completed, 0 waiting for an answer, 0 failed, 0 blocked, 0 errors" in resumed.stdout
    assert sorted(project.refs()) == ["Refs: release-notes", "Refs: task-1", "Refs: task-2"]


def test_sigint_stops_the_run_cleanly_and_resume_finishes_it(project: Project) -> None:
    run = project.start()
    try:
        project.wait_for_agent(run)
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130, project.output()
    finally:
        run.kill()
        run.wait(timeout=10)
    out = project.output()
    assert "SIGINT: stopping the run" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("run ")
    assert "stopped by SIGINT" in last
    assert f"Continue with `pm-agent resume -C {project.repo}`." in last
    assert "Traceback" not in out
    assert project.processes_inside() == [], "no agent or tool of the run outlives the stop"
    store = open_store(default_store_path(project.repo))
    try:
        run_rec = store.latest_run()
        assert run_rec is not None
        assert run_rec.status.value == "stopped"
        assert [e.payload for e in store.events(run_rec.id) if e.kind == "run.stopped"] == [{"signal": "SIGINT"}]
    finally:
        store.close()
    project.go.touch()
    resumed = project.pm("resume", "--no-input")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "run.resumed" in resumed.stdout
    assert "task-1: developer continues session" in resumed.stdout, "the stopped session is resumed, not redone"
    assert sorted(r for r in project.refs() if "task-" in r) == ["Refs: task-1", "Refs: task-2"]


def test_sigterm_then_resume_after_fixing_pm_agent_yaml(project: Project) -> None:
    run = project.start()
    try:
        project.wait_for_agent(run)
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=60) == 143, project.output()
    finally:
        run.kill()
        run.wait(timeout=10)
    assert "stopped by SIGTERM" in project.output().strip().splitlines()[-1]
    config = project.repo / "pm-agent.yaml"
    original = config.read_text(encoding="utf-8")
    # A change that would move the finished work elsewhere is refused, and changes nothing.
    config.write_text(original + "working_branch: pm/elsewhere\n", encoding="utf-8")
    refused = project.pm("resume", "--no-input")
    assert refused.returncode == 2
    assert "working_branch None -> 'pm/elsewhere' since run" in refused.stderr
    assert "Put it back to resume this run" in refused.stderr
    assert project.events("run.config_changed") == []
    # The fix: a real test command for the gates, and more turns for the agent.
    count = "import pathlib; print('notes checked:', len(list(pathlib.Path('notes').glob('*.md'))))"
    check = f'{sys.executable} -c "{count}"'
    fixed = original.replace("test_command: 'true'", f"test_command: {json.dumps(check)}")
    config.write_text(fixed.replace("stuck_after_s: 60", "stuck_after_s: 60\n  max_turns: 40"), encoding="utf-8")
    project.go.touch()
    resumed = project.pm("resume", "--no-input")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "pm-agent.yaml changed since the run last ran: agent.max_turns 60 -> 40" in resumed.stdout
    changes = project.events("run.config_changed")[-1]["changes"]
    assert changes == [
        {"key": "agent.max_turns", "old": 60, "new": 40},
        {"key": "environment.test_command", "old": "true", "new": check},
    ]
    store = open_store(default_store_path(project.repo))
    try:
        run_rec = store.latest_run()
        assert run_rec is not None
        evidence = [g.evidence for g in store.gate_results(run_rec.id, "1") if g.gate == "3-tests-run"]
    finally:
        store.close()
    assert evidence, "task 1 was gated after the resume"
    # The changed test command ran on the baseline commit too, so the gates compare like with like.
    refreshed = [e for e in project.events("run.baseline") if e.get("refreshed")]
    assert [e["refreshed"] for e in refreshed] == [["test_command"]]
    environment = refreshed[0]["environment"]
    assert isinstance(environment, dict)
    assert [(c["key"], c["command"], c["exit_code"]) for c in environment["commands"]] == [("test_command", check, 0)]
    assert all(f"`{check}` PASSED" in text for text in evidence), "its gates ran the new test command"
