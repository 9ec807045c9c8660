"""The execution queue over task positions (deps._plain_queue) is the queue graphlib's sorter gives, and
every plan it cannot order (cycles, unknown or repeated ids) gets the sorter's error."""

from __future__ import annotations

import random

from pm_agent.errors import PlanError
from pm_agent.plan import Dependency, Task, Tier, execution_queue, fastpath


def _queue_or_error(tasks: list[Task]) -> list[str] | str:
    try:
        return execution_queue(tasks, "plan.md")
    except PlanError as exc:
        return f"PlanError: {exc}"


def _random_tasks(rng: random.Random) -> list[Task]:
    """Edges mostly to earlier tasks, some to later ones (cycles), written twice, to unknown ids, to the
    task itself; now and then an id used twice."""
    size = rng.randint(1, 12)
    ids = [str(i) for i in range(1, size + 1)]
    if rng.random() < 0.1:
        ids[rng.randrange(size)] = rng.choice(ids)
    tasks = []
    for i, task_id in enumerate(ids):
        deps: list[str] = []
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            roll = rng.random()
            if roll < 0.8 and i:
                deps.append(ids[rng.randrange(i)])
            elif roll < 0.9:
                deps.append(rng.choice(ids))
            elif roll < 0.95:
                deps.append("99")
            else:
                deps.append(task_id)
        tier = rng.choice(list(Tier))
        tasks.append(Task(id=task_id, title=f"T{i}", tier=tier, depends_on=[Dependency(task_id=d) for d in deps]))
    return tasks


def test_the_queue_over_task_positions_is_the_sorters_queue() -> None:
    rng = random.Random(8)
    outcomes = {"queue": 0, "error": 0}
    for _ in range(1_500):
        tasks = _random_tasks(rng)
        fast = _queue_or_error(tasks)
        fastpath.ENABLED = False
        try:
            slow = _queue_or_error(tasks)
        finally:
            fastpath.ENABLED = True
        assert fast == slow, [(t.id, t.tier, t.dependency_ids()) for t in tasks]
        outcomes["error" if isinstance(fast, str) else "queue"] += 1
    assert min(outcomes.values()) > 300  # both outcomes were met often
