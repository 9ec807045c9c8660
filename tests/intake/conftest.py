"""A small target repository for requests, and the scripted model behind the real Claude Code CLI."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from pm_agent.config import PmConfig, render_config
from pm_agent.intake import IntakePaths
from pm_agent.testing.model_server import ModelServer
from pm_agent.testing.repo import init_repo
from pm_agent.testing.team import ScriptedTeam, Step, line_of, signal, write

PY = sys.executable
DAY = date(2026, 11, 26)
REQUEST = "Print rows as a table"
PATHS = IntakePaths.of(REQUEST, DAY)


def paths_for_new(slug: str) -> IntakePaths:
    """The paths `pm-agent new --slug SLUG` will choose when it starts now, dated by the local day as it dates them.

    Computed at import, they went stale when the suite crossed midnight before the test ran (CI at 7e94174: the
    scripted analyst wrote yesterday's file). Within a minute of midnight this waits for the new day, so the date
    cannot turn between this call and the command's own."""
    now = datetime.now(UTC).astimezone()
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), now.tzinfo)
    left = (midnight - now).total_seconds()
    if left < 60:
        time.sleep(left + 1)
    return IntakePaths.of(REQUEST, datetime.now(UTC).astimezone().date(), slug=slug)


REQUIREMENTS = """\
# Requirements: table output

## Request
Print rows as a table, one row a line.

## Scenarios
### S1: rows on their own lines
Given the rows "a" and "b"
When render(rows) is called
Then the result is "a" and "b" on two lines

## Contexts
Rows are short strings.

## Observables
The string render returns.

## Non-goals
Column alignment.

## Open questions
none
"""

PLAN_HEAD = """\
# calc output

**Goal:** print rows as a table

### Task 1: Output format

**Files:**
- Create: `src/calc/fmt.py`
- Test: `tests/test_fmt.py`

"""
PLAN_TAIL = """
**Acceptance criteria:**
- S1: render(rows) puts each row on its own line

**Tests to add:**
- `tests/test_fmt.py::test_render`: two rows on two lines
"""
PLAN_GOOD = PLAN_HEAD + "**Depends on:** none\n" + PLAN_TAIL
PLAN_BAD = PLAN_HEAD + "**Depends on:** Task 7\n" + PLAN_TAIL  # no task 7: a parse error
CRITERION = "S1: render(rows) puts each row on its own line"
FMT = '"""fmt."""\n\n\ndef render(rows: list[str]) -> str:\n    return "\\n".join(rows)\n'
TEST_FMT = 'from calc.fmt import render\n\n\ndef test_render() -> None:\n    assert render(["a", "b"]) == "a\\nb"\n'

NOTE = {"summary": "done", "risks": [], "rollback": "git revert"}


def done(summary: str) -> Step:
    """An analyst's or planner's confident `complete` signal."""
    return signal({"signal": "complete", "summary": summary, "selfAssessment": "confident"})


def delivery_scripts() -> dict[tuple[str, str], list[Step]]:
    """The approved plan's one task delivered: the developer writes fmt.py and its test, every reviewer approves."""
    files = {"src/calc/fmt.py": FMT, "tests/test_fmt.py": TEST_FMT}
    mapping = [{"criterion": CRITERION, "location": f"src/calc/fmt.py:{line_of(FMT, 'return')}"}]
    developer_done = {
        "signal": "complete",
        "summary": "render joins rows",
        "criteriaMapping": mapping,
        "reviewNote": NOTE,
        "filesCreated": sorted(files),
    }
    return {
        ("task-1", "developer"): [*(write(p, t) for p, t in files.items()), signal(developer_done)],
        ("*", "reviewer"): [signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})],
    }


SMOKE = "import calc\n\n\ndef test_import() -> None:\n    assert calc.__doc__ == 'calc.'\n"
PYPROJECT = """\
[project]
name = "calc"
version = "0.0.1"

[tool.pytest.ini_options]
pythonpath = ["src"]

[tool.ruff]
line-length = 100
"""


def config() -> PmConfig:
    """Gates that run fast on the calc repository; sessions in an isolated HOME."""
    return PmConfig.model_validate(
        {
            "max_parallel_agents": 2,
            "environment": {
                "test_command": f"{PY} -m pytest -q -p no:cacheprovider",
                "lint_command": f"{PY} -m ruff check --no-cache src tests",
                "gate_timeout_s": 120,
            },
            "agent": {"isolated_home": True, "stuck_after_s": 60, "max_turns": 30, "time_budget_min": 5},
        }
    )


@dataclass
class Target:
    """The calc repository and the team that plays the model."""

    repo: Path
    team: ScriptedTeam
    server: ModelServer


@pytest.fixture
def calc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], Target]]:
    """Build the calc repository (with its pm-agent.yaml committed); the model server plays a ScriptedTeam."""
    team = ScriptedTeam()
    with ModelServer(fallback=team) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")

        def make() -> Target:
            files = {
                "pyproject.toml": PYPROJECT,
                "src/calc/__init__.py": '"""calc."""\n',
                "tests/test_smoke.py": SMOKE,
                "README.md": "# calc\n",
                ".gitignore": "__pycache__/\n",
                "pm-agent.yaml": render_config(config()),
            }
            return Target(init_repo(tmp_path / "calc", files=files, message="initial"), team, server)

        yield make
