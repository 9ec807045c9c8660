"""Properties: the queue is a priority-respecting topological order; the parser fails only with PlanError."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pm_agent.errors import PlanError
from pm_agent.plan import Dependency, Task, Tier, execution_queue, parse_plan_text
from pm_agent.plan.deps import TIER_PRIORITY


@st.composite
def dags(draw: st.DrawFn) -> list[Task]:
    size = draw(st.integers(min_value=1, max_value=25))
    tasks: list[Task] = []
    for index in range(size):
        deps = draw(st.sets(st.integers(min_value=0, max_value=index - 1), max_size=3)) if index else set()
        tier = draw(st.sampled_from(list(Tier)))
        tasks.append(
            Task(
                id=str(index + 1),
                title=f"T{index + 1}",
                tier=tier,
                depends_on=[Dependency(task_id=str(d + 1)) for d in sorted(deps)],
            )
        )
    # shuffle plan order so dependencies may point forward in the document
    return draw(st.permutations(tasks))


@settings(max_examples=150, deadline=None)
@given(dags())
def test_queue_is_topological_and_picks_the_best_ready_task(tasks: list[Task]) -> None:
    queue = execution_queue(tasks)
    assert sorted(queue) == sorted(t.id for t in tasks)
    by_id = {t.id: t for t in tasks}
    order = {t.id: i for i, t in enumerate(tasks)}
    done: set[str] = set()
    for task_id in queue:
        ready = [t for t in tasks if t.id not in done and set(t.dependency_ids()) <= done]
        best = min(ready, key=lambda t: (TIER_PRIORITY[t.tier], order[t.id]))
        assert task_id == best.id
        assert set(by_id[task_id].dependency_ids()) <= done
        done.add(task_id)


PIECES = st.sampled_from(
    [
        "# Plan\n",
        "## Task 1: A\n",
        "### Task 2：B\n",
        "## Task 2: again\n",
        "**Depends on:** Task 1\n",
        "**Depends on:** Task 9\n",
        "**Tier:** low\n",
        "**Tier:** huge\n",
        "**Files:**\n",
        "- Create: `src/a.py`\n",
        "- Modify: `src/a.py:1-2`\n",
        "- [ ] **Step 1: Go**\n",
        "```yaml\ntask_id: task-3\n```\n",
        "```yaml\ntask_id: [\n```\n",
        "```yaml\nbogus: 1\nacceptance_criteria: x\n```\n",
        "```\ncode\n```\n",
        "> quote\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "\n",
        "text **bold** `code`\n",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=14), st.text(max_size=30))
def test_parser_fails_only_with_plan_error(pieces: list[str], noise: str) -> None:
    text = "".join(pieces) + noise
    result = _parse(text)
    if isinstance(result, PlanError):
        assert result.path is not None
        assert result.line is None or 1 <= result.line <= text.count("\n") + 2
    else:
        assert result
        assert all(t.line >= 1 for t in result)


def _parse(text: str) -> list[Task] | PlanError:
    try:
        return parse_plan_text(text, "p.md")[1]
    except PlanError as error:
        return error
