"""The brain's routing: who is asking, how far the session got, what it answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pm_agent.demo import DEMO_ANSWERS, DemoBrain, parse_session_header, session_header
from pm_agent.demo.brain import parse_contract
from pm_agent.signals import TOOL_NAME, parse_signal
from pm_agent.testing.model_server import ModelRequest, Turn

from .conftest import Demo, Offline, answer, prompt_for, run_offline

CHECKS_PASSED = "...\n3 passed in 0.05s\nAll checks passed!\nSuccess: no issues found in 4 source files"


def _request(system: str, messages: list[dict[str, Any]]) -> ModelRequest:
    body = {"system": [{"type": "text", "text": system}], "messages": messages, "stream": True}
    return ModelRequest("POST", "/v1/messages", {}, body)


def _names(turn: Turn | None) -> list[str]:
    assert turn is not None
    return [call.name for call in turn.tool_calls]


def test_requests_that_are_not_sessions_get_no_answer() -> None:
    brain = DemoBrain()
    assert brain(_request("Generate a short title for this conversation.", [])) is None
    assert brain(ModelRequest("POST", "/v1/messages", {}, "not json")) is None


def test_the_session_header_round_trips(tmp_path: Path) -> None:
    workdir = tmp_path / "work tree"
    line = session_header("fixer", "task-3", 2, workdir)
    assert line == f"pm-agent session: role=fixer task=task-3 attempt=2 workdir={workdir.resolve()}"
    header = parse_session_header(f"You are Claude Code.\n{line}\nMore instructions.")
    assert header is not None
    assert (header.role, header.task, header.attempt, header.workdir) == ("fixer", "task-3", 2, workdir.resolve())
    assert header.line() == line
    assert parse_session_header("pm-agent session: role=developer") is None


def test_the_contract_is_read_from_the_prompt(demo: Demo) -> None:
    contract = parse_contract(prompt_for(demo, "3", "developer"))
    assert contract is not None
    assert contract["task_id"] == "task-3"
    assert contract["tests_to_add"] == ["tests/test_counts.py"]
    assert contract["environment"]["test_command"].endswith("-m pytest -q")
    assert parse_contract("no contract here") is None
    assert parse_contract("task_contract:\n  a: [unclosed\n") is None


def test_a_developer_reads_what_it_modifies_writes_checks_signals_and_stops(demo: Demo) -> None:
    brain = DemoBrain()
    system = session_header("developer", "task-5", 1, demo.repo)
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt_for(demo, "5", "developer")}]
    plan = [["Read"], ["Write", "Write", "Write"], ["Bash"], [TOOL_NAME], []]
    for expected in plan:
        turn = brain(_request(system, messages))
        assert _names(turn) == expected
        assert turn == brain(_request(system, messages))  # stateless: the same request, the same turn
        assert turn is not None
        blocks = [{"type": "tool_use", "id": f"t{len(messages)}{i}", "name": c.name, "input": dict(c.input)}
                  for i, c in enumerate(turn.tool_calls)]  # fmt: skip
        messages.append({"role": "assistant", "content": [{"type": "text", "text": turn.text or ""}, *blocks]})
        results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "ok"} for b in blocks]
        messages.append({"role": "user", "content": results})
    reads = [c.input["file_path"] for c in (brain(_request(system, messages[:1])) or Turn()).tool_calls]
    assert reads == [str(demo.repo / "src/textstats/__init__.py")]
    closing = Turn(text="Done: task-5 is ready for pm-agent's gates.")
    assert brain(_request(system, messages)) == closing  # another request after the end: the same closing text


def test_the_question_then_the_answer_in_the_same_session(demo: Demo) -> None:
    brain = DemoBrain()
    for task_id in ("1", "2", "3", "4", "5"):
        run_offline(brain, demo, task_id, "developer", attempt=2, bash_output=CHECKS_PASSED)  # no slip
    asked = run_offline(brain, demo, "6", "developer")
    assert [p["signal"] for p in asked.payloads] == ["needs-user-input"]
    assert asked.written == {}
    assert "waiting for the answer" in asked.messages[-1]["content"][0]["text"]
    done = answer(asked, brain, "JSON by default, please; a --table flag for people.")
    assert [p["signal"] for p in done.payloads] == ["needs-user-input", "complete"]
    assert 'DEFAULT_FORMAT = "json"' in done.written["src/textstats/cli.py"]
    assert "The user's answer: JSON by default" in done.payload["summary"]
    assert done.payload["filesModified"] == ["pyproject.toml"]
    assert done.payload["testsClaimedPassing"] is True


def test_an_answer_merged_into_the_tool_result_message_still_counts(demo: Demo) -> None:
    """A session killed after its question may come back with the answer in the same user message."""
    brain = DemoBrain()
    asked = run_offline(brain, demo, "6", "developer")
    messages = asked.messages[:2]  # the prompt and the question's tool call, not the closing text
    merged = [*messages, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_001_0", "content": "Signal recorded."},
        {"type": "text", "text": f"The user answered: {DEMO_ANSWERS['task-6']}"},
    ]}]  # fmt: skip
    turn = brain(_request(asked.system, merged))
    assert _names(turn) == ["Read"]  # pyproject.toml, before it is rewritten


def test_an_answer_in_a_fresh_prompt_is_used_without_asking(demo: Demo) -> None:
    brain = DemoBrain()
    session = Offline(system=session_header("developer", "task-6", 1, demo.repo), workdir=demo.repo)
    prompt = prompt_for(demo, "6", "developer") + "\nThe user answered: JSON by default.\n"
    session.messages.append({"role": "user", "content": [{"type": "text", "text": prompt}]})
    turn = brain(session.request())
    assert _names(turn) == ["Read"]


def test_a_later_developer_attempt_does_not_ask_again_and_uses_the_scripted_answer(demo: Demo) -> None:
    session = run_offline(DemoBrain(), demo, "6", "developer", attempt=2)
    assert [p["signal"] for p in session.payloads] == ["complete"]
    assert 'DEFAULT_FORMAT = "table"' in session.written["src/textstats/cli.py"]


def test_the_first_attempt_of_task_3_runs_only_the_old_tests(demo: Demo) -> None:
    brain = DemoBrain()
    run_offline(brain, demo, "2", "developer")
    first = run_offline(brain, demo, "3", "developer")
    assert "tests/test_tokenize.py" in first.commands[0]
    assert "groups -= 1" not in first.written["src/textstats/counts.py"]
    assert first.payload["testsClaimedPassing"] is True
    again = run_offline(brain, demo, "3", "developer", attempt=2)
    assert "groups -= 1" in again.written["src/textstats/counts.py"]
    assert "tests/test_tokenize.py" not in again.commands[0]


def test_the_fixer_names_only_gates_from_its_evidence(demo: Demo) -> None:
    brain = DemoBrain()
    run_offline(brain, demo, "2", "developer", bash_output=CHECKS_PASSED)
    run_offline(brain, demo, "3", "developer", bash_output=CHECKS_PASSED)
    extra = "Source: gates\n3-tests-run: 1 failed"
    fix = run_offline(brain, demo, "3", "fixer", attempt=2, extra=extra, bash_output=CHECKS_PASSED)
    assert fix.payload["summary"].startswith("Fixed the failed gate(s) 3-tests-run. ")
    extra = "Source: reviewer\nrename a variable (the contract mentions secrets and scope: not gates here)"
    plain = run_offline(brain, demo, "2", "fixer", attempt=2, extra=extra, bash_output=CHECKS_PASSED)
    assert plain.payload["summary"].startswith("Rewrote src/textstats/tokenize.py")
    assert plain.payload["filesModified"] == ["src/textstats/tokenize.py", "tests/test_tokenize.py"]


def test_an_unknown_task_asks_the_user(demo: Demo) -> None:
    brain = DemoBrain()
    system = session_header("developer", "task-42", 1, demo.repo)
    turn = brain(_request(system, [{"role": "user", "content": "Do task 42."}]))
    assert _names(turn) == [TOOL_NAME]
    assert turn is not None
    signal = parse_signal(dict(turn.tool_calls[0].input))
    assert signal.signal == "needs-user-input"
    assert "task-42" in signal.question


def test_a_refused_signal_is_reported_in_the_closing_text(demo: Demo) -> None:
    brain = DemoBrain()
    system = session_header("reviewer", "task-2", 1, demo.repo)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Review task 2."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "?? x"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": TOOL_NAME, "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "is_error": True,
                                      "content": [{"type": "text", "text": "session is no longer live"}]}]},
    ]  # fmt: skip
    turn = brain(_request(system, messages))
    assert turn is not None
    assert turn.tool_calls == ()
    assert turn.text is not None
    assert "refused" in turn.text
    assert "no longer live" in turn.text


@pytest.mark.parametrize("role", ["developer", "fixer", "reviewer", "tester", "analyst", "planner"])
def test_every_role_of_every_task_sends_a_valid_signal(demo: Demo, role: str) -> None:
    brain = DemoBrain()
    for task in demo.plan.tasks:
        session = run_offline(brain, demo, task.id, role, attempt=2, bash_output=CHECKS_PASSED)
        assert len(session.signals) == 1, (role, task.ref)  # parse_signal validated it
        if role in ("developer", "fixer", "tester"):
            assert session.payload["testEvidence"][1] == "3 passed in 0.05s"
            assert session.payload["lintEvidence"][1] == "All checks passed!"
            assert session.payload["typecheckEvidence"][1].startswith("Success: no issues found")
            assert session.payload["testsClaimedPassing"] is True
            assert len(session.payload["criteriaMapping"]) == len(task.acceptance_criteria)
        assert session.payload["stepId"] == task.ref
        assert session.turns <= 6


def test_the_evidence_quotes_the_summary_lines_of_a_failing_run(demo: Demo) -> None:
    output = "\n".join(
        [
            "Exit code 1",
            "..F.",
            "FAILED tests/test_tokenize.py::test_words - assert 1 == 2",
            "1 failed, 3 passed in 0.05s",
            "src/textstats/tokenize.py:1:1: F401 `os` imported but unused",
            "Found 2 errors.",
            "[*] 1 fixable with the `--fix` option.",
            "Found 1 error in 1 file (checked 2 source files)",
        ]
    )
    session = run_offline(DemoBrain(), demo, "2", "tester", bash_output=output)
    payload = session.payload
    assert payload["testEvidence"][1] == "1 failed, 3 passed in 0.05s"
    assert payload["lintEvidence"][1] == "Found 2 errors."
    assert payload["typecheckEvidence"][1] == "Found 1 error in 1 file (checked 2 source files)"
    assert payload["testsClaimedPassing"] is False
    assert payload["testEvidence"][0].endswith("-m pytest -q")
