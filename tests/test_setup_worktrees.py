"""`environment.setup_command` over a whole `pm-agent run`: first in the preflight's checkout, then in each task's
worktree before its agent starts (the agent runs the tests too), and in the final gate's checkout; a setup that
fails in a task's worktree stops that task with the command's output, its worktree kept.

The agent is the fast fake agent (`pm_agent.testing.fake_agent`), put in place of Claude Code through
`agent.binary`; what each step saw is written to a log outside the repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.store import default_store_path, open_store
from pm_agent.testing.notes import fake_launcher, note_script, note_section
from pm_agent.testing.repo import git, init_repo

pytestmark = pytest.mark.slow

CONFIG = """\
agent:
  binary: {binary}
  isolated_home: true
max_parallel_agents: {slots}
environment:
  setup_command: {setup}
  test_command: test -f deps/installed
final_review:
  enabled: false
"""


def _project(tmp_path: Path, setup: str, log: Path, *, tasks: int = 2, slots: int = 3) -> Path:
    """LOW note tasks whose agents first log whether the worktree has what the setup installs."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    sections = []
    for n in range(1, tasks + 1):
        script = note_script(n)
        seen = f'if test -f deps/installed; then echo "agent saw deps in $PWD"; else echo "agent: no deps"; fi >> {log}'
        script["steps"] = [{"bash": seen}, *script["steps"]]  # type: ignore[misc]
        (scripts / f"{n}.json").write_text(json.dumps(script), encoding="utf-8")
        sections.append(note_section(n, scripts / f"{n}.json"))
    notes = "# notes\n\n**Goal:** two notes.\n\n" + "\n".join(sections)
    repo = init_repo(tmp_path / "repo", files={"docs/notes.md": notes, ".gitignore": "deps/\n"}, message="plan")
    config = CONFIG.format(binary=fake_launcher(tmp_path / "fake-claude"), setup=json.dumps(setup), slots=slots)
    (repo / "pm-agent.yaml").write_text(config, encoding="utf-8")
    return repo


def _run(repo: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pm_agent", "run", "docs/notes.md", "--no-input"]
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=300, check=False)


def test_setup_runs_in_every_new_worktree_before_its_agent_and_the_gates(tmp_path: Path) -> None:
    """One slot, three tasks: the third takes the first's worktree over (`git clean -ffdx` took what it installed)."""
    log = tmp_path / "setup.log"
    setup = f'mkdir -p deps && touch deps/installed && echo "setup in $PWD" >> {log}'
    repo = _project(tmp_path, setup, log, tasks=3, slots=1)
    result = _run(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = log.read_text(encoding="utf-8").splitlines()
    where = [line.split(" in ", 1)[1] for line in lines]
    assert "/.pm-agent/preflight/" in where[0], lines
    assert where[-1].endswith("/_release"), lines  # the final gate's checkout, last
    for n in (1, 2, 3):
        task = [i for i, path in enumerate(where) if path.endswith(f"/task-{n}")]
        assert [lines[i].split(" in ")[0] for i in task] == ["setup", "agent saw deps"], lines
    assert "agent: no deps" not in lines
    assert git(repo, "status", "--porcelain") == "?? pm-agent.yaml", "nothing else in the user's checkout"
    assert "deps" not in git(repo, "ls-tree", "-r", "--name-only", "pm/notes/work")


def test_a_setup_that_fails_in_a_task_worktree_stops_that_task_with_its_output(tmp_path: Path) -> None:
    log = tmp_path / "setup.log"
    # Succeeds in the preflight's checkout, fails in the tasks' worktrees (say, a cache only the first had).
    refuse = 'case "$PWD" in */task-*) echo "no offline cache for $PWD" >&2; exit 3;; esac'
    setup = f"{refuse}; mkdir -p deps; touch deps/installed"
    repo = _project(tmp_path, setup, log)
    result = _run(repo)
    assert result.returncode != 0, result.stdout + result.stderr
    store = open_store(default_store_path(repo))
    try:
        run = store.latest_run()
        assert run is not None
        errors = {e.task_id: str(e.payload["error"]) for e in store.events(run.id) if e.kind == "task.error"}
    finally:
        store.close()
    assert sorted(errors) == ["1", "2"], result.stdout
    for n, error in errors.items():
        assert error.startswith(f"SetupError: environment.setup_command failed in {repo}/.pm-agent/worktrees/")
        assert f"/task-{n}: exit 3" in error
        assert "no offline cache for" in error
        assert (repo / ".pm-agent" / "worktrees").exists()
    assert not log.exists(), "no agent started without its setup"
