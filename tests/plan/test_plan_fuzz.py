"""Any input gives a plan or a clean PlanError naming file and line; never a traceback (hypothesis)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pm_agent.errors import PlanError
from pm_agent.plan import Plan, load_plan

# Pieces of the structures real plans broke the parser with, to be shuffled and repeated.
PIECES = st.sampled_from(
    [
        "# Plan\n",
        "# Sample plan\n",
        "---\nname: A task\ndepends_on: [1, 2]\nparallel: true\n---\n",
        "---\nupdated: 2026-01-01Zgithub: x\ndepends_on: [1,]\n---\n",
        "## Task 1: A\n",
        "### Task 2: B\n",
        "## Task 2: again\n",
        "# Task 3: top\n",
        "**Depends on:** Task 1 GREEN passing\n",
        "**Depends on:** Task 1 (a, b) — first, Task 2 (for the schema)\n",
        "**Depends on:** none\n",
        "**Depends on:** Tasks 1-3\n",
        "**Depends on:** the parser\n",
        "**Depends on:**\n- Task 9\n- prose\n",
        "**Files:**\n",
        "- Create: `src/a.py`\n",
        "- Modify: `src/a.py:1-2,5` (the `x` part)\n",
        "- Modify: any file\n",
        "- Test: `tests/test_a.py`\n",
        "- [ ] **Step 1: Run the full test suite**\n",
        "- [ ] Re-run the probes\n",
        "  ```bash\n  cat > p.md <<'EOF'\n",
        "EOF\n  ```\n",
        "```yaml\ntask_id: task-3\ndepends_on: []\n```\n",
        "```yaml\ntask_id: [[[[\n```\n",
        "```yaml\nacceptance_criteria: [[[[]]]]\n```\n",
        "```\ncode\n```\n",
        "> quote\n",
        "*a " * 60 + "b*" * 60 + "\n",
        "\n",
    ]
)


def _check(result: Plan | PlanError, texts: list[str]) -> None:
    if isinstance(result, PlanError):
        assert result.path is not None
        longest = max(text.count("\n") for text in texts) + 2
        assert result.line is None or 1 <= result.line <= longest
        return
    assert result.tasks
    assert sorted(result.queue) == sorted(t.id for t in result.tasks)
    assert all(t.line >= 1 for t in result.tasks)
    position = {task_id: i for i, task_id in enumerate(result.queue)}
    assert all(position[d] < position[t.id] for t in result.tasks for d in t.dependency_ids())
    assert all(":" in warning for warning in result.warnings)


def _load(root: Path) -> Plan | PlanError:
    try:
        return load_plan(root)
    except PlanError as error:
        return error


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(PIECES, max_size=12), min_size=1, max_size=3), st.text(max_size=20))
def test_any_file_or_folder_gives_a_plan_or_a_plan_error(files: list[list[str]], noise: str) -> None:
    texts = ["".join(pieces) + noise for pieces in files]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for number, text in enumerate(texts, start=1):
            (root / f"{number}.md").write_text(text, encoding="utf-8")
        _check(_load(root / "1.md"), texts[:1])
        _check(_load(root), texts)


@pytest.mark.parametrize(
    "block",
    [
        "```yaml\ntask_id: " + "[" * 2000 + "\n```\n",
        "```yaml\nacceptance_criteria: " + "[" * 2000 + "]" * 2000 + "\n```\n",
    ],
)
def test_yaml_nested_thousands_deep_is_a_plan_error(tmp_path: Path, block: str) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(f"# P\n\n## Task 1: A\n\n{block}", encoding="utf-8")
    with pytest.raises(PlanError) as info:
        load_plan(plan_file)
    assert (info.value.path, info.value.line) == (plan_file, 5)
    assert info.value.message == "invalid yaml in task contract: nested too deeply"


def test_front_matter_nested_thousands_deep_is_read_line_by_line(tmp_path: Path) -> None:
    plan_file = tmp_path / "7.md"
    deep = "[" * 2000 + "1" + "]" * 2000
    plan_file.write_text(f"---\nname: Deep\ndepends_on: {deep}\n---\n# Task: Deep\n", encoding="utf-8")
    plan = load_plan(plan_file)
    assert [(t.id, t.title) for t in plan.tasks] == [("7", "Deep")]
    assert plan.warnings[0].startswith(f"{plan_file}:1: front matter is not valid YAML (nested too deeply)")


def test_thousands_of_nested_emphasis_levels_parse(tmp_path: Path) -> None:
    deep = " ".join(["*x"] * 3000) + " " + " ".join(["y*"] * 3000)
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(f"# P\n\n## Task 1: A {deep}\n\n**Depends on:** none {deep}\n\n{deep}\n", encoding="utf-8")
    plan = load_plan(plan_file)
    assert [t.id for t in plan.tasks] == ["1"]
    assert plan.tasks[0].title.startswith("A ")
    assert plan.tasks[0].declared_independent is True
