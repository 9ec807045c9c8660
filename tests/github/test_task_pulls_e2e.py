"""A kept CRITICAL task branch's pull request end to end: the real `pm-agent run`, the real Claude Code CLI against
the scripted model, the fake GitHub with a bare repository as its copy.

A schema migration is CRITICAL and high-blast-radius: it keeps its branch and lands as one merge commit. Its pull
request (head = the task branch, base = the working branch) is opened as it lands, while the remote's working
branch does not contain it yet; the release pull request follows; pm-agent never calls merge.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pm_agent.config import PmConfig, render_config
from pm_agent.github.pulls import merge_of
from pm_agent.store import default_store_path, open_store
from pm_agent.store.outbox import Outbox
from pm_agent.testing.fake_github import FakeGitHub
from pm_agent.testing.model_server import ModelServer
from pm_agent.testing.team import ScriptedTeam, line_of, signal, write
from pm_agent.vcs import Git

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PY = sys.executable
NOTE = {"summary": "done", "risks": [], "rollback": "git revert"}
CRITERION = "the users table has an id primary key"
PLAN = f"""\
# calc

### Task 1: Users table migration

**Files:**
- Create: `migrations/001_users.sql`

**Acceptance criteria:**
- {CRITERION}
"""
SQL = "create table users (\n    id integer primary key\n);\n"
PYPROJECT = '[project]\nname = "calc"\nversion = "0.0.1"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'
HELD = "feat/calc/task-1-users-table-migration"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, FakeGitHub]]:
    mapping = [{"criterion": CRITERION, "location": f"migrations/001_users.sql:{line_of(SQL, 'primary key')}"}]
    complete = {"signal": "complete", "summary": "ok", "criteriaMapping": mapping, "reviewNote": NOTE}
    team = ScriptedTeam(scripts={
        ("task-1", "developer"): [write("migrations/001_users.sql", SQL), signal(complete)],
        ("*", "reviewer"): [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
    })  # fmt: skip
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    with ModelServer(fallback=team) as server, FakeGitHub("acme/app", git_dir=remote) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("GITHUB_TOKEN", fake.token)
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
        yield repo, fake


def test_a_kept_critical_branch_gets_its_pull_request_as_it_lands(world: tuple[Path, FakeGitHub]) -> None:
    repo, fake = world
    exe = shutil.which("pm-agent", path=str(Path(PY).parent))
    assert exe is not None
    proc = subprocess.run([exe, "run", "docs/plans/calc.md", "--no-input", "-C", str(repo)], cwd=repo,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    with open_store(default_store_path(repo)) as store:
        run = store.latest_run()
        assert run is not None
        work = run.working_branch
        task = store.get_task(run.id, "1")
        assert Outbox(store.engine, store.now).summary(run.id) == (0, None)
        pull_state = Outbox(store.engine, store.now).get_state(f"task-pull:{run.id}:1")
    assert task.tier.value == "critical"
    merge = merge_of(Git(repo), work, HELD)
    assert merge is not None
    assert git(repo, "log", "-1", "--format=%s", merge) == f"Merge {HELD} into {work}"
    pulls = sorted((i for i in fake.issues.values() if i.pull is not None), key=lambda i: i.number)
    heads = [(p.pull.head, p.pull.base) for p in pulls if p.pull is not None]
    assert heads == [(HELD, work), (work, "main")], "the task's pull request first, then the release's"
    task_pull = pulls[0]
    assert pull_state == task_pull.number
    assert task_pull.pull is not None
    # Opened while the remote's working branch was the state just before the merge, not containing the task.
    assert task_pull.pull.base_sha == git(repo, "rev-parse", f"{merge}^1")
    assert task_pull.pull.head_sha == git(repo, "rev-parse", HELD)
    assert "Users table migration" in task_pull.body
    assert "Review artifact: `" in task_pull.body
    assert fake.branch_sha(work) == git(repo, "rev-parse", work), "the release pushed the merge, a fast-forward"
    [issue] = [n for n, i in fake.issues.items() if i.pull is None and i.title.startswith("task-1: ")]
    comments = [c.body for c in fake.comment_list if c.issue_number == issue]
    assert any(f"Pull request #{task_pull.number} ({HELD} into {work})" in b for b in comments), comments
    assert len(fake.calls("POST", "/pulls")) == 2
    assert [r for r in fake.requests if r.method == "PUT" or r.path.endswith("/merge")] == []
