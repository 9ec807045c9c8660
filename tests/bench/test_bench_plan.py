"""bench_plan's generated plans are what the benchmark says they are: n tasks, every format, no false splits."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from bench_plan import realistic_plan

from pm_agent.plan import Plan, Tier, load_plan
from pm_agent.plan.sections import read_blocks

N = 120


@pytest.fixture(scope="module")
def text() -> str:
    return realistic_plan(N)


@pytest.fixture(scope="module")
def plan(text: str, tmp_path_factory: pytest.TempPathFactory) -> Plan:
    path = tmp_path_factory.mktemp("bench") / "plan.md"
    path.write_text(text, encoding="utf-8")
    return load_plan(path)


def test_the_same_seed_gives_the_same_plan(text: str) -> None:
    assert realistic_plan(N) == text
    assert realistic_plan(N, seed=12) != text


def test_n_tasks_in_order(plan: Plan) -> None:
    assert [t.id for t in plan.tasks] == [str(i) for i in range(1, N + 1)]
    assert sorted(plan.queue, key=int) == [t.id for t in plan.tasks]


def test_task_headings_in_fences_are_code_not_tasks(text: str, plan: Plan) -> None:
    fenced = re.findall(r"^ {0,3}### Task \d+: (?:not a task|echo inside|a heading in|indented fence)", text, re.M)
    assert len(fenced) > 30
    bodies = "\n".join(t.body for t in plan.tasks)
    assert all(line.strip() in bodies for line in fenced)


def test_every_format_and_heading_style_is_there(text: str, plan: Plan) -> None:
    assert re.search(r"^### Task \d+ — ", text, re.M)
    assert re.search(r"^### Task \d+\. ", text, re.M)
    assert any(t.steps for t in plan.tasks)  # superpowers sections
    assert any(t.estimate is not None for t in plan.tasks)  # field sections
    assert any("```yaml" in t.body and t.expected_files.create for t in plan.tasks)  # contracts
    assert any(t.expected_files.modify_ranges for t in plan.tasks)
    assert {t.tier for t in plan.tasks} == {Tier.LOW, Tier.NORMAL, Tier.CRITICAL}


def test_depends_on_in_the_ways_people_write_it(plan: Plan) -> None:
    assert any("the prose is kept as notes" in w for w in plan.warnings)
    assert any(t.declared_independent for t in plan.tasks)
    assert any(sum(not d.inferred for d in t.depends_on) >= 3 for t in plan.tasks)  # `Tasks 4-6`
    for task in plan.tasks:
        assert all(int(d.task_id) < int(task.id) for d in task.depends_on)


def test_the_last_task_verifies_everything(plan: Plan) -> None:
    last = plan.tasks[-1]
    assert last.title == "Final verification"
    assert {d.task_id for d in last.depends_on} == {str(i) for i in range(1, N)}
    assert plan.queue[-1] == last.id


def test_each_section_is_read_once_by_the_fast_reader(text: str) -> None:
    blocks = read_blocks(text, text.split("\n"))
    assert (blocks.sections, blocks.fast, blocks.whole) == (N + 1, N + 1, False)
