"""`pm-agent run github:acme/app?label=ready` with the real Claude Code CLI against the scripted model: the labelled
issues of the fake GitHub are the plan (task ids = issue numbers, `Depends on #1` honoured), run to release."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pm_agent.config import PmConfig, render_config
from pm_agent.plan.github_source import issue_number
from pm_agent.store import default_store_path, open_store
from pm_agent.testing.fake_github import FakeGitHub
from pm_agent.testing.model_server import ModelServer
from pm_agent.testing.repo import commit_all, init_repo
from pm_agent.testing.team import ScriptedTeam, Step, bash, line_of, signal, write

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PY = sys.executable
TOKEN = "ghp_e2eIssuesToken"
NOTE: dict[str, Any] = {"summary": "done", "risks": [], "rollback": "git revert the task commit"}
ADD = '"""add."""\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n'
TEST_ADD = "from calc.add import add\n\n\ndef test_add() -> None:\n    assert add(1, 2) == 3\n"
NEG = '"""neg."""\n\n\ndef neg(a: int) -> int:\n    return -a\n'
TEST_NEG = "from calc.neg import neg\n\n\ndef test_neg() -> None:\n    assert neg(2) == -2\n"

ADD_ISSUE = """We need addition.

Files:
- Create: `src/calc/add.py`
- Test: `tests/test_add.py`

## Acceptance criteria
- add(a, b) returns the sum
"""

NEG_ISSUE = """Then negation.

Depends on #1

Files:
- Create: `src/calc/neg.py`
- Test: `tests/test_neg.py`

## Acceptance criteria
- neg(a) returns minus a
"""


def dev(path: str, text: str, test_path: str, test_text: str, criterion: str) -> list[Step]:
    mapping = [{"criterion": criterion, "location": f"{path}:{line_of(text, 'return')}"}]
    done = {"signal": "complete", "summary": "ok", "criteriaMapping": mapping, "reviewNote": NOTE}
    done["filesCreated"] = [path, test_path]
    return [write(path, text), write(test_path, test_text), bash("python -m pytest -q"), signal(done)]


@pytest.fixture
def team() -> Iterator[tuple[ScriptedTeam, ModelServer]]:
    team = ScriptedTeam()
    with ModelServer(fallback=team) as server:
        yield team, server


def target(root: Path, gh: FakeGitHub) -> Path:
    config = PmConfig.model_validate(
        {
            "max_parallel_agents": 2,
            "tester_tiers": [],
            "environment": {"test_command": f"{PY} -m pytest -q -p no:cacheprovider", "gate_timeout_s": 120},
            "agent": {"isolated_home": True, "stuck_after_s": 60, "max_turns": 30, "time_budget_min": 5},
            "github": {"api_url": gh.url, "token_env": "PM_E2E_GH_TOKEN"},
        }
    )
    files = {
        "pyproject.toml": '[project]\nname = "calc"\nversion = "0.0.1"\n\n'
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "src/calc/__init__.py": '"""calc."""\n',
        "tests/test_smoke.py": "import calc\n\n\ndef test_import() -> None:\n    assert calc.__doc__ == 'calc.'\n",
        "README.md": "# calc\n",
        ".gitignore": "__pycache__/\n",
        "pm-agent.yaml": render_config(config),
    }
    repo = init_repo(root / "calc", files=files)
    commit_all(repo, "pm-agent config")
    return repo


@pytest.mark.timeout(600)
def test_run_a_plan_read_from_labelled_issues(tmp_path: Path, team: tuple[ScriptedTeam, ModelServer]) -> None:
    scripted, server = team
    scripted.scripts = {
        ("task-1", "developer"): dev(
            "src/calc/add.py", ADD, "tests/test_add.py", TEST_ADD, "add(a, b) returns the sum"
        ),
        ("task-3", "developer"): dev("src/calc/neg.py", NEG, "tests/test_neg.py", TEST_NEG, "neg(a) returns minus a"),
        ("*", "reviewer"): [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
    }
    with FakeGitHub("acme/app", token=TOKEN) as gh:
        gh.add_issue("Addition", ADD_ISSUE, ("ready",))
        gh.add_issue("Someday", "not now", ("backlog",))
        gh.add_issue("Negation", NEG_ISSUE, ("ready",))
        repo = target(tmp_path, gh)
        exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
        assert exe is not None
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "test-key",
            "PM_E2E_GH_TOKEN": TOKEN,
        }
        done = subprocess.run(
            [exe, "run", "github:acme/app?label=ready", "--no-input", "-C", str(repo)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=540,
            check=False,
        )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "RELEASE SUMMARY" in out
    assert TOKEN not in out
    store = open_store(default_store_path(repo))
    try:
        run = store.latest_run()
        assert run is not None
        assert run.plan_id == "github-acme-app-ready"
        assert run.working_branch == "pm/github-acme-app-ready/work"
        tasks = {r.task_id: r for r in store.list_tasks(run.id) if r.task_id in ("1", "3")}
        assert {k: (r.state, issue_number(r.task())) for k, r in tasks.items()} == {
            "1": ("completed", 1),
            "3": ("completed", 3),
        }
        assert [d.task_id for d in tasks["3"].task().depends_on if not d.inferred] == ["1"]
        first, second = (tasks[k].commit_sha for k in ("1", "3"))
        assert first is not None
        assert second is not None
        order = subprocess.run(["git", "merge-base", "--is-ancestor", first, second], cwd=repo, check=False).returncode
        assert order == 0, "issue #3 (Depends on #1) landed after #1"
    finally:
        store.close()
