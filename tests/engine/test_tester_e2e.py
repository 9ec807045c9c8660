"""Issue 12 part 2 with the real Claude Code CLI: Siegemaster after the gates.

- the tester adds an edge-case test the code fails: the gates send the task back to the developer
  with the failure, the developer fixes the code, the gates pass (the tester's test intact), the
  reviewer approves, and the tester's test is committed with the task;
- the tester's test passes at once: gates again, then review; a CRITICAL task with no tester script
  gets ScriptedTeam's default tester, which adds nothing;
- the developer sent back deletes the tester's test instead of fixing the code: `tester-tests` fails
  (the base knows nothing of that test), the fixer restores it and fixes the code.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.agents.header import SessionHeader
from pm_agent.engine.tester_guard import OUT_OF_SCOPE
from pm_agent.store import default_store_path, open_store
from pm_agent.testing.scenario import ModelRequest, Turn
from pm_agent.testing.team import Step, bash, signal, write

from .calc_plan import REVIEW, claimed, complete, plan, section
from .conftest import Target, git
from .test_loop_e2e import module

pytestmark = [pytest.mark.claude, pytest.mark.slow]

TESTERS = ["normal", "critical"]  # the default; the engine's Target turns the tester off for the older tests
CRITERION = "absolute(x) returns the distance of x from zero"
ABSOLUTE = section(
    1, "Absolute value", create=["src/calc/absolute.py"], test="tests/test_absolute.py", criteria=[CRITERION]
)
BUGGY = module("absolute", "def absolute(x: int) -> int:\n    return x\n")
FIXED = module("absolute", "def absolute(x: int) -> int:\n    return -x if x < 0 else x\n")
DEV_TEST = "from calc.absolute import absolute\n\n\ndef test_absolute() -> None:\n    assert absolute(3) == 3\n"
EDGE = "\n\ndef test_absolute_of_a_negative() -> None:\n    assert absolute(-3) == 3\n"
CRITERIA = [(CRITERION, "src/calc/absolute.py", "return")]
DONE_STATES = ["reviewing_code", "creating_pr", "completed"]


def overwrite(path: str, content: str) -> str:
    """A shell command that rewrites `path` (Claude Code's Write refuses a file the session has not read)."""
    return f"cat > {path} <<'EOF'\n{content}EOF"


def first_or_later(first: Step, later: Step) -> Step:
    """`first` in the developer's first session, `later` in the session it is sent back to."""
    return lambda s, r: (first if s.attempt <= 1 else later)(s, r)


def developer(code: str, prompts: list[str]) -> list[Step]:
    """Writes `code` and its test; sent back, rewrites the code as FIXED."""
    start: dict[str, str] = {"src/calc/absolute.py": code, "tests/test_absolute.py": DEV_TEST}

    def fix(s: SessionHeader, r: ModelRequest) -> Turn:
        prompts.append(r.conversation_text())
        return bash(overwrite("src/calc/absolute.py", FIXED))(s, r)

    return [
        first_or_later(write("src/calc/absolute.py", code), fix),
        first_or_later(write("tests/test_absolute.py", DEV_TEST), bash("python -m pytest -q || true")),
        first_or_later(
            claimed(start, CRITERIA),
            complete({"src/calc/absolute.py": FIXED}, CRITERIA, filesModified=["src/calc/absolute.py"]),
        ),
    ]


def edge_tester(prompts: list[str]) -> list[Step]:
    """Appends EDGE to the task's test file (its first request's conversation goes to `prompts`)."""
    append = bash(f"cat >> tests/test_absolute.py <<'EOF'\n{EDGE}EOF")

    def first(s: SessionHeader, r: ModelRequest) -> Turn:
        prompts.append(r.conversation_text())
        return append(s, r)

    report = {
        "signal": "complete",
        "summary": "added test_absolute_of_a_negative: absolute(-3) == 3",
        "filesModified": ["tests/test_absolute.py"],
    }
    return [first, bash("python -m pytest -q || true"), signal(report)]


TESTER = edge_tester([])
TESTER_CODE = "def absolute(x: int) -> int:\n    return x if x > 0 else -x  # the tester's own version\n"


def overreaching_tester() -> list[Step]:
    """Adds EDGE, and also rewrites the code and adds a module: only the test may stay (tester_guard)."""
    steps = edge_tester([])
    cheat = bash(overwrite("src/calc/absolute.py", TESTER_CODE) + "\n" + overwrite("src/calc/extra.py", "X = 1\n"))
    return [steps[0], cheat, *steps[1:]]


def states(t: Target, run_id: str, task: str) -> list[str]:
    store = open_store(default_store_path(t.repo))
    try:
        return [x.to_state for x in store.transitions(run_id, task)]
    finally:
        store.close()


@pytest.mark.timeout(420)
def test_the_testers_failing_edge_case_goes_back_to_the_developer(target: Callable[[str], Target]) -> None:
    t = target(plan(ABSOLUTE))
    prompts: list[str] = []
    tester_prompts: list[str] = []
    t.team.scripts = {
        ("task-1", "developer"): developer(BUGGY, prompts),
        ("task-1", "tester"): edge_tester(tester_prompts),
        ("task-1", "reviewer"): REVIEW,
    }
    rc = t.start(tester_tiers=TESTERS)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert outcome.completed == ["1"], events

    gates = ["running_tests", "validating_solution", "running_tests", "implementing", "running_tests"]
    assert states(t, rc.run_id, "1")[-8:] == [*gates, *DONE_STATES], events
    store = open_store(default_store_path(t.repo))
    try:
        roles = [s.role for s in store.list_sessions(rc.run_id, "1")]
        assert roles == ["developer", "tester", "developer", "reviewer"]
        task = store.get_task(rc.run_id, "1")
        assert task.retry_count == 1  # the developer's second round spent one fix attempt
        fixes = [e.payload for e in store.events(rc.run_id, "1") if e.kind == "fix.requested"]
        assert [f["source"] for f in fixes] == ["the tester's edge-case tests fail (2-tests-added, 3-tests-run)"]
        assert "test_absolute_of_a_negative" in fixes[0]["evidence"]
        last = max(g.attempt for g in store.gate_results(rc.run_id, "1"))
        final = {g.gate: g.passed for g in store.gate_results(rc.run_id, "1") if g.attempt == last}
        assert final["tester-tests"] is True
        assert all(final.values()), final
    finally:
        store.close()
    # The tester read what changed, where its tests go and how the gates run them.
    assert tester_prompts, "the tester ran"
    assert "src/calc/absolute.py" in tester_prompts[0]
    assert "Add your tests to: tests/test_absolute.py" in tester_prompts[0]
    assert "The gates run the tests with: " in tester_prompts[0]
    # The developer sent back read why: the failing edge case, and that the tests are not its to change.
    assert prompts, "the developer was sent back"
    assert "Your change came back with this evidence; fix the code, not the tests" in prompts[0]
    assert "test_absolute_of_a_negative" in prompts[0]

    branch = rc.run.working_branch
    assert git(t.repo, "show", f"{branch}:tests/test_absolute.py") == DEV_TEST + EDGE
    assert git(t.repo, "show", f"{branch}:src/calc/absolute.py") == FIXED
    review = git(t.repo, "show", f"{branch}:docs/reviews/task-1-review.md")
    # The artifact's criteria are the developer's mapping: the tester's report is not the task's report.
    assert f"| {CRITERION} | `src/calc/absolute.py:5` |" in review
    assert "### tester-tests: PASS" in review


CLAMP_CRITERION = "clamp(x) limits x to 0..10"
CLAMP = module("clamp", "def clamp(x: int) -> int:\n    return max(0, min(x, 10))\n")
CLAMP_TEST = "from calc.clamp import clamp\n\n\ndef test_clamp() -> None:\n    assert clamp(5) == 5\n"


def test_a_passing_edge_case_goes_on_to_review_and_a_task_without_a_tester_script_gets_the_default(
    target: Callable[[str], Target],
) -> None:
    clamp = section(
        2,
        "Clamp",
        tier="critical",
        create=["src/calc/clamp.py"],
        test="tests/test_clamp.py",
        criteria=[CLAMP_CRITERION],
    )
    t = target(plan(ABSOLUTE, clamp))
    clamp_files = {"src/calc/clamp.py": CLAMP, "tests/test_clamp.py": CLAMP_TEST}
    t.team.scripts = {
        ("task-1", "developer"): developer(FIXED, []),
        ("task-1", "tester"): overreaching_tester(),
        ("task-2", "developer"): [
            write("src/calc/clamp.py", CLAMP),
            write("tests/test_clamp.py", CLAMP_TEST),
            claimed(clamp_files, [(CLAMP_CRITERION, "src/calc/clamp.py", "return")]),
        ],
        ("*", "reviewer"): REVIEW,
    }
    rc = t.start(tester_tiers=TESTERS)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert sorted(outcome.completed) == ["1", "2"], events
    for task in ("1", "2"):
        assert states(t, rc.run_id, task)[-6:] == ["running_tests", "validating_solution", "running_tests",
                                                   *DONE_STATES], events  # fmt: skip
    store = open_store(default_store_path(t.repo))
    try:
        for task in ("1", "2"):
            assert [s.role for s in store.list_sessions(rc.run_id, task)] == ["developer", "tester", "reviewer"]
            assert store.get_task(rc.run_id, task).retry_count == 0
    finally:
        store.close()
    branch = rc.run.working_branch
    assert git(t.repo, "show", f"{branch}:tests/test_absolute.py") == DEV_TEST + EDGE
    assert git(t.repo, "show", f"{branch}:tests/test_clamp.py") == CLAMP_TEST  # the default tester added nothing
    # The tester's edits outside the tests were put back before the gates checked its round, and said so.
    assert git(t.repo, "show", f"{branch}:src/calc/absolute.py") == FIXED
    assert "src/calc/extra.py" not in git(t.repo, "ls-tree", "-r", "--name-only", branch)
    store = open_store(default_store_path(t.repo))
    try:
        put_back = [e.payload for e in store.events(rc.run_id, "1") if e.kind == OUT_OF_SCOPE]
    finally:
        store.close()
    assert put_back == [{"restored": ["src/calc/absolute.py", "src/calc/extra.py"]}]


def test_a_developer_who_deletes_the_testers_test_is_refused_and_the_fixer_restores_it(
    target: Callable[[str], Target],
) -> None:
    t = target(plan(ABSOLUTE))
    start = {"src/calc/absolute.py": BUGGY, "tests/test_absolute.py": DEV_TEST}
    fixed = {"src/calc/absolute.py": FIXED, "tests/test_absolute.py": DEV_TEST + EDGE}
    t.team.scripts = {
        ("task-1", "developer"): [
            first_or_later(write("src/calc/absolute.py", BUGGY), bash(overwrite("tests/test_absolute.py", DEV_TEST))),
            first_or_later(write("tests/test_absolute.py", DEV_TEST), claimed(start, CRITERIA)),
            claimed(start, CRITERIA),
        ],
        ("task-1", "tester"): TESTER,
        ("task-1", "fixer"): [
            bash("\n".join(overwrite(path, text) for path, text in fixed.items())),
            complete(fixed, CRITERIA, filesModified=sorted(fixed)),
        ],
        ("task-1", "reviewer"): REVIEW,
    }
    rc = t.start(tester_tiers=TESTERS)
    outcome = t.drive(rc)
    events = "\n".join(f"{k}: {m}" for k, m, _ in t.listener.events)
    assert outcome.completed == ["1"], events
    store = open_store(default_store_path(t.repo))
    try:
        assert [s.role for s in store.list_sessions(rc.run_id, "1")] == ["developer", "tester", "developer", "fixer",
                                                                         "reviewer"]  # fmt: skip
        refused = [g for g in store.gate_results(rc.run_id, "1") if g.gate == "tester-tests" and not g.passed]
        assert len(refused) == 1
        assert "assertions removed: tests/test_absolute.py (-1 +0 assert lines)" in refused[0].evidence
        fixes = [e.payload for e in store.events(rc.run_id, "1") if e.kind == "fix.requested"]
        assert fixes[-1]["source"].startswith("gates failed: ")
        assert "tester-tests" in fixes[-1]["source"]
    finally:
        store.close()
    assert git(t.repo, "show", f"{rc.run.working_branch}:tests/test_absolute.py") == DEV_TEST + EDGE
