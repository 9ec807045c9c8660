"""A task with any expected file is no whole-plan verification, whichever kind of file it is."""

from __future__ import annotations

import random

from pm_agent.plan import ExpectedFiles, Task
from pm_agent.plan.infer import verification_reason

KINDS = ("create", "modify", "delete", "test")


def test_expected_files_of_each_kind_make_a_task_no_verification() -> None:
    rng = random.Random(6)
    verifying = 0
    for _ in range(400):
        paths = {kind: [f"src/{kind}_{i}.py" for i in range(rng.choice((0, 0, 0, 1, 2)))] for kind in KINDS}
        title = rng.choice(("Final verification", "Run the full test suite", "Add the cache", "Verify the API"))
        task = Task(id="1", title=title, expected_files=ExpectedFiles(**paths), steps=["Run all tests"])
        reason = verification_reason(task)
        if task.expected_files.all_paths():
            assert reason is None, paths
        else:
            assert reason is not None, title
            verifying += 1
    assert 20 < verifying < 350  # both kinds of task were met
