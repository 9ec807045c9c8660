"""SignalDesk, the server's checks and recording, in-process against a real store file (fast paths)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pm_agent.signals import SIGNAL_KINDS, parse_signal, signal_instructions
from pm_agent.signals.desk import SignalDesk, desk_from_env, same_task, task_key
from pm_agent.signals.server import input_schema
from pm_agent.store import open_store
from pm_agent.store.records import SessionStatus

if TYPE_CHECKING:
    from conftest import World

Payload = dict[str, Any]


def desk(world: World, token: str | None, audit: tuple[str, str] | None = None) -> SignalDesk:
    return SignalDesk(world.store, token, audit=audit)


@pytest.mark.parametrize(
    "step_id", ["3", "task-3", "Task 3", "#3", "step 3", " TASK_3 ", "task#3", "Task: 3"]
)
def test_spellings_of_task_3(step_id: str) -> None:
    assert same_task(step_id, "3")


@pytest.mark.parametrize("step_id", ["4", "13", "task-33", "3.1", "", "task"])
def test_other_tasks_are_not_task_3(step_id: str) -> None:
    assert not same_task(step_id, "3")


def test_dotted_and_named_task_ids() -> None:
    assert same_task("Task 1.2", "1.2")
    assert not same_task("Task 1.3", "1.2")
    assert same_task("task-auth-login", "auth-login")
    assert same_task("auth-login", "task-auth-login")
    assert task_key("  Task #7 ") == "7"


@pytest.mark.parametrize("step_id", ["3", "task-3", "Task 3", 3])
def test_step_id_spellings_are_accepted(world: World, complete: Payload, step_id: object) -> None:
    session = world.session()
    reply = desk(world, session.token).receive({**complete, "stepId": step_id})
    assert reply.accepted, reply.text
    assert reply.record is not None
    assert reply.record.payload["stepId"] == "3"  # stored canonical: the session's task id


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"signal": "partially-complete", "stepId": "3", "progress": "half", "continuationPoint": "tests"},
            "A fresh session of your role will continue from your continuation point.",
        ),
        (
            {"signal": "needs-user-input", "stepId": "3", "question": "JWT?", "context": "no ADR"},
            "Your question goes to a human; this session is resumed with the answer.",
        ),
        (
            {
                "signal": "needs-role-followup",
                "stepId": "3",
                "targetRole": "pathseeker",
                "reason": "split the step",
                "context": "too big",
                "resume": True,
            },
            "The planner role acts first; then this session is resumed.",
        ),
        (
            {
                "signal": "needs-role-followup",
                "stepId": "3",
                "targetRole": "spiritmender",
                "reason": "lint",
                "context": "3 errors",
                "resume": False,
            },
            "The fixer role takes over; this session will not be resumed.",
        ),
    ],
)
def test_each_signal_kind_is_recorded_and_says_what_happens_next(
    world: World, arguments: Payload, expected: str
) -> None:
    session = world.session("developer")
    reply = desk(world, session.token).receive(arguments)
    assert reply.accepted, reply.text
    assert reply.text == (
        f"Signal {arguments['signal']} recorded for task 3. {expected} "
        "Stop now: end your turn without further tool calls."
    )
    (stored,) = world.signals(session)
    assert stored.accepted
    assert stored.kind == arguments["signal"]
    assert parse_signal(stored.payload) == parse_signal(arguments)  # stored payload is a valid signal


def test_target_role_is_stored_canonical(world: World) -> None:
    session = world.session("siegemaster")
    arguments = {
        "signal": "needs-role-followup",
        "stepId": "3",
        "targetRole": "Codeweaver",
        "reason": "gap",
        "context": "no input validation",
        "resume": True,
    }
    assert desk(world, session.token).receive(arguments).accepted
    assert world.signals(session)[0].payload["targetRole"] == "developer"


def test_second_signal_after_an_accepted_one_is_refused(world: World, complete: Payload) -> None:
    session = world.session()
    signals = desk(world, session.token)
    assert signals.receive(complete).accepted
    again = signals.receive({**complete, "summary": "More."})
    assert not again.accepted
    assert again.text == (
        "Signal refused: this session already sent its signal (complete, seq 1); only one is taken\n"
        "Stop now: end your turn without further tool calls."
    )
    assert [(s.seq, s.accepted) for s in world.signals(session)] == [(1, True), (2, False)]


def test_starting_session_is_live(world: World, complete: Payload) -> None:
    session = world.session()
    world.store.update_session(session.id, status=SessionStatus.STARTING)
    assert desk(world, session.token).receive(complete).accepted


@pytest.mark.parametrize(
    "status", [SessionStatus.EXITED, SessionStatus.CRASHED, SessionStatus.STUCK, SessionStatus.KILLED]
)
def test_session_no_longer_live_is_refused(world: World, complete: Payload, status: SessionStatus) -> None:
    session = world.session()
    world.store.update_session(session.id, status=status)
    reply = desk(world, session.token).receive(complete)
    assert not reply.accepted
    assert f"this session is {status.value}, no longer live" in reply.text
    assert [s.accepted for s in world.signals(session)] == [False]


def test_session_of_an_older_attempt_is_refused(world: World, complete: Payload) -> None:
    session = world.session(attempt=1)
    world.store.update_task(world.run_id, "3", event="task.retry", attempt=2)
    reply = desk(world, session.token).receive(complete)
    assert not reply.accepted
    assert "attempt 1 of task 3, but pm-agent has moved on to attempt 2" in reply.text
    (stored,) = world.signals(session)
    assert (stored.accepted, stored.attempt) == (False, 1)


def test_several_problems_are_reported_together(world: World) -> None:
    session = world.session("reviewer", task_id="4")
    reply = desk(world, session.token).receive({"signal": "needs-user-input", "stepId": "3", "question": "?"})
    assert not reply.accepted
    assert reply.text == (
        "Signal refused: invalid needs-user-input signal:\n"
        "- context: required\n"
        "- stepId: this session works on task '4', not '3'; use \"4\"\n"
        "- signal: the reviewer role may not send needs-user-input; "
        "it may send: complete, needs-role-followup\n"
        "Correct these and call signal_back again."
    )


def test_session_with_an_unknown_role_may_send_nothing(world: World, complete: Payload) -> None:
    session = world.session("wizard")
    reply = desk(world, session.token).receive(complete)
    assert not reply.accepted
    assert "the 'wizard' role may not send complete; it may send: nothing" in reply.text


def test_missing_token_is_refused_and_audited(world: World, complete: Payload) -> None:
    reply = desk(world, None, audit=(world.run_id, "4")).receive(complete)
    assert not reply.accepted
    assert "no session token (PM_AGENT_SESSION_TOKEN is not set)" in reply.text
    (stored,) = world.task_signals("4")
    assert (stored.session_id, stored.accepted, stored.seq) == (None, False, 0)


def test_unknown_token_with_an_unknown_audit_run_is_still_refused(world: World, complete: Payload) -> None:
    reply = desk(world, "nope", audit=("no-such-run", "3")).receive(complete)
    assert not reply.accepted
    assert reply.record is None
    assert "unknown to pm-agent" in reply.text


def test_desk_from_env_reports_setup_problems(tmp_path: Path, complete: Payload) -> None:
    reply = desk_from_env({}).receive(complete)
    assert not reply.accepted
    assert "PM_AGENT_DB is not set" in reply.text
    missing = tmp_path / "missing.db"
    reply = desk_from_env({"PM_AGENT_DB": str(missing), "PM_AGENT_SESSION_TOKEN": "t"}).receive(complete)
    assert f"the store {missing} does not exist" in reply.text
    assert not missing.exists()


def test_desk_from_env_finds_the_session(world: World, complete: Payload) -> None:
    session = world.session()
    env = {"PM_AGENT_DB": str(world.db), "PM_AGENT_SESSION_TOKEN": session.token}
    signals = desk_from_env(env)
    try:
        assert signals.session() == world.store.get_session(session.id)
        assert signals.receive(complete).accepted
    finally:
        assert signals.store is not None
        signals.store.close()  # the SqliteStore desk_from_env opened


def test_full_input_schema_lists_every_field_and_who_uses_it() -> None:
    schema = input_schema()
    props = schema["properties"]
    assert props["signal"]["enum"] == [
        "complete",
        "partially-complete",
        "needs-user-input",
        "needs-role-followup",
    ]
    assert list(props)[:2] == ["signal", "stepId"]
    assert "complete (required)" in props["summary"]["description"]
    assert "needs-user-input (required)" in props["question"]["description"]
    assert "pathseeker" in props["targetRole"]["enum"]
    assert props["selfAssessment"]["enum"] == ["confident", "uncertain", "blocked"]
    assert props["reviewNote"]["type"] == "object"
    assert set(props["reviewNote"]["required"]) == {"summary", "rollback"}
    assert schema["additionalProperties"] is False
    json.dumps(schema)


def test_store_file_is_shared_with_other_processes(world: World, complete: Payload) -> None:
    """The desk writes through its own store object; another opener of the file sees the signal."""
    session = world.session()
    with open_store(world.db) as other:
        assert SignalDesk(other, session.token).receive(complete).accepted
    assert [s.accepted for s in world.store.signals_for_session(session.id)] == [True]


# ---- prompt text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "kinds"),
    [
        ("chaoswhisperer", ["complete", "needs-user-input"]),
        ("planner", ["complete", "partially-complete", "needs-user-input", "needs-role-followup"]),
        ("codeweaver", ["complete", "partially-complete", "needs-user-input", "needs-role-followup"]),
        ("tester", ["complete", "partially-complete", "needs-role-followup"]),
        ("lawbringer", ["complete", "needs-role-followup"]),
        ("fixer", ["complete", "partially-complete", "needs-user-input", "needs-role-followup"]),
    ],
)
def test_instructions_list_only_the_roles_signals_with_valid_examples(role: str, kinds: list[str]) -> None:
    text = signal_instructions(role, "3")
    assert "mcp__pm__signal_back" in text
    assert 'stepId "3"' in text
    listed = [kind for kind in SIGNAL_KINDS if f"- `{kind}`:" in text]
    assert listed == kinds
    examples = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert [e["signal"] for e in examples] == kinds
    for example in examples:
        parse_signal(example)


def test_instructions_for_code_roles_ask_for_gate_evidence() -> None:
    text = signal_instructions("developer", "7", criteria=["POST /login returns a token"])
    for needle in ["criteriaMapping (gate 1)", "reviewNote (gate 6)", "testEvidence", "selfAssessment"]:
        assert needle in text
    example = json.loads(next(line for line in text.splitlines() if line.startswith('{"signal": "complete"')))
    assert example["criteriaMapping"][0]["criterion"] == "POST /login returns a token"
    assert example["stepId"] == "7"
    reviewer = signal_instructions("reviewer", "7")
    assert "criteriaMapping (gate 1)" not in reviewer
    assert "needs-user-input" not in reviewer


def test_instructions_refuse_roles_pm_agent_plays_itself() -> None:
    with pytest.raises(ValueError, match="sends no signals"):
        signal_instructions("ward", "3")


def test_neither_the_desk_nor_the_server_loads_the_mcp_sdk() -> None:
    """The server speaks MCP's stdio framing itself: importing `mcp` cost each agent session about a second."""
    code = (
        "import sys, pm_agent.signals.desk\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))\n"
        "import pm_agent.signals.server\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'anyio')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "[]"]
