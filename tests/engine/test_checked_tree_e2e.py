"""Issue 9 part 3 with the real Claude Code CLI: what is committed is what was checked, and secrets stay out.

- a reviewer session that writes a file after the gates passed: delivery refuses (checked-tree), the
  fixer is told the file's name, and the commit holds exactly the tree the next gate run checked;
- a background process the developer left behind writes a file while the gates run: the gate run
  fails checked-tree, and the file never reaches the working branch;
- an agent that echoes ANTHROPIC_API_KEY and a fake AWS key: neither is in the store's file, and a
  gate command that writes out its environment saw no secret but the variable pass_env allows.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pm_agent.agents.header import SessionHeader
from pm_agent.engine.api import drive_run
from pm_agent.store import default_store_path, open_store
from pm_agent.testing.scenario import ModelRequest, ToolCall, Turn
from pm_agent.testing.team import Step, bash, signal, write
from pm_agent.vcs import Git, tree_with_files

from .calc_plan import ADDITION, NOTE, plan
from .calc_plan import claimed as complete
from .conftest import Target, git
from .test_loop_e2e import module, pytest_source, work

pytestmark = [pytest.mark.claude, pytest.mark.slow]

PY = sys.executable
PLAN = plan(ADDITION)
ADD = {
    "src/calc/add.py": module("add", "def add(a: int, b: int) -> int:\n    return a + b\n"),
    "tests/test_add.py": pytest_source("add", "add", "add(2, 3)", "5"),
}
CRITERIA = [("add(a, b) returns the sum", "src/calc/add.py", "return")]
APPROVE = signal({"signal": "complete", "summary": "approved", "reviewNote": NOTE})
ARTIFACT = "docs/reviews/task-1-review.md"


def files_on(repo: Path, ref: str) -> set[str]:
    return set(git(repo, "ls-tree", "-r", "--name-only", ref).split())


def test_a_file_the_reviewer_writes_after_the_gates_is_refused_named_and_never_committed(
    target: Callable[[str], Target],
) -> None:
    t = target(PLAN)

    def review(s: SessionHeader, r: ModelRequest) -> Turn:
        if s.attempt == 2:  # the first review, right after the first gate run passed
            path = f"{s.workdir}/src/calc/backdoor.py"
            return Turn(tool_calls=[ToolCall("Write", {"file_path": path, "content": "import os\n"})])
        return APPROVE(s, r)

    t.team.scripts.update(
        {
            ("task-1", "developer"): work(ADD, CRITERIA),
            ("task-1", "reviewer"): [review, APPROVE],
            ("task-1", "fixer"): [bash("rm -f src/calc/backdoor.py"), complete(ADD, CRITERIA)],
        }
    )
    rc = t.start()
    result = asyncio.run(drive_run(rc, 0.2))
    branch = rc.run.working_branch

    assert result.final is not None, result.outcome
    assert result.final.passed, result.outcome
    assert "src/calc/backdoor.py" not in files_on(t.repo, branch)
    assert git(t.repo, "log", "--all", "--format=%H", "--", "src/calc/backdoor.py") == ""
    store = open_store(default_store_path(t.repo))
    try:
        refused = [g for g in store.gate_results(rc.run_id, "1") if g.gate == "checked-tree"]
        assert [g.passed for g in refused] == [False]
        assert "src/calc/backdoor.py (new)" in refused[0].evidence
        fixes = [e.payload for e in store.events(rc.run_id, "1") if e.kind == "fix.requested"]
        assert [f["source"] for f in fixes] == ["integrity failure (checked-tree) at delivery"]
        assert "src/calc/backdoor.py" in fixes[0]["evidence"]
        moves = [(x.from_state, x.to_state) for x in store.transitions(rc.run_id, "1")]
        assert ("creating_pr", "fixing_issues") in moves
        checked = [e.payload for e in store.events(rc.run_id, "1") if e.kind == "gates.checked_tree"]
        commit = store.get_task(rc.run_id, "1").commit_sha
    finally:
        store.close()
    assert len(checked) == 2, "one tree per gate run: the developer's, then the fixer's"
    assert commit is not None
    # The commit is the last checked tree plus pm-agent's review artifact, and nothing else.
    artifact = git(t.repo, "show", f"{commit}:{ARTIFACT}")
    expected = tree_with_files(Git(t.repo), checked[-1]["tree"], {ARTIFACT: artifact})
    assert git(t.repo, "rev-parse", f"{commit}^{{tree}}").strip() == expected


# Waits until `python -m pytest` (the gates' test command, not the agent CLI whose prompt quotes it) runs in
# this worktree, then writes into the tree. `-ef` is a shell builtin, so the poll forks only for this worktree.
WATCHER = (
    "setsid bash -c 'for i in $(seq 1 600); do for p in /proc/[0-9]*; do "
    "if [ \"$p/cwd\" -ef . ] && tr \"\\0\" \" \" < \"$p/cmdline\" 2>/dev/null "
    "| grep -q \"^[^ ]*python[^ ]* -m pytest\"; then "
    "echo \"LEAKED = 1\" > src/calc/late.py; exit 0; fi; done; sleep 0.1; done' >/dev/null 2>&1 < /dev/null &"
)


def test_a_file_a_background_process_writes_during_the_gates_is_not_committed(
    target: Callable[[str], Target],
) -> None:
    t = target(PLAN)
    developer: list[Step] = [*(write(p, text) for p, text in ADD.items()), bash(WATCHER), complete(ADD, CRITERIA)]
    t.team.scripts.update(
        {
            ("task-1", "developer"): developer,
            ("task-1", "fixer"): [bash("rm -f src/calc/late.py"), complete(ADD, CRITERIA)],
            ("task-1", "reviewer"): [APPROVE],
        }
    )
    rc = t.start()
    result = asyncio.run(drive_run(rc, 0.2))
    branch = rc.run.working_branch

    assert result.final is not None, result.outcome
    assert result.final.passed, result.outcome
    assert "src/calc/late.py" not in files_on(t.repo, branch)
    assert "src/calc/add.py" in files_on(t.repo, branch)
    store = open_store(default_store_path(t.repo))
    try:
        results = store.gate_results(rc.run_id, "1")
        first = min(g.attempt for g in results)
        failed = [g for g in results if not g.passed]
        assert [(g.gate, g.attempt) for g in failed] == [("checked-tree", first)], [g.evidence for g in failed]
        assert "the worktree changed while the gates ran" in failed[0].evidence
        assert "src/calc/late.py (new)" in failed[0].evidence
        assert store.get_task(rc.run_id, "1").retry_count == 1
    finally:
        store.close()
    assert [role for task, role, _ in t.team.log if role == "fixer"], "the fixer was asked"


DUMP_ENV = (
    "import json, os, sys\nwith open(sys.argv[1], 'a') as f:\n    f.write(json.dumps(dict(os.environ)) + '\\n')\n"
)
API_KEY = "sk-ant-api03-e2e-redaction-5b1f0c9d7e"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def test_secrets_an_agent_prints_are_not_stored_and_gate_commands_do_not_see_them(
    target: Callable[[str], Target], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = target(PLAN)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("CALC_DB_PASSWORD", "let-me-in-42")
    dump_script = tmp_path / "dump_env.py"
    dump_script.write_text(DUMP_ENV, encoding="utf-8")
    seen = tmp_path / "gate-env.jsonl"
    leak = bash(f'echo "key: $ANTHROPIC_API_KEY"; echo "aws: {AWS_KEY}"')
    t.team.scripts.update(
        {
            ("task-1", "developer"): [leak, *work(ADD, CRITERIA, summary=f"done; found {AWS_KEY} in my notes")],
            ("task-1", "reviewer"): [APPROVE],
        }
    )
    environment = {
        **t.config().environment.model_dump(),
        "typecheck_command": f"{PY} {dump_script} {seen}",
        "pass_env": ["CALC_DB_PASSWORD"],
    }
    rc = t.start(environment=environment)
    result = asyncio.run(drive_run(rc, 0.2))

    assert result.final is not None, result.outcome
    assert result.final.passed, result.outcome
    envs = [json.loads(line) for line in seen.read_text(encoding="utf-8").splitlines()]
    assert len(envs) >= 3, "baseline, the gate run and the final release gate each ran the command"
    for env in envs:
        assert not [name for name in env if name.startswith(("ANTHROPIC_", "AWS_", "PM_AGENT_"))]
        assert API_KEY not in json.dumps(env)
        assert env["CALC_DB_PASSWORD"] == "let-me-in-42"
        assert env["PATH"] == os.environ["PATH"]
        assert env["HOME"] == os.environ["HOME"]

    db = default_store_path(t.repo)
    store = open_store(db)
    try:
        sessions = store.list_sessions(rc.run_id, "1")
        lines = [e.payload for s in sessions for e in store.session_events(s.id)]
        (complete_signal,) = [g for s in sessions for g in store.signals_for_session(s.id) if g.kind == "complete"][:1]
    finally:
        store.close()
    assert any("key: [REDACTED:$ANTHROPIC_API_KEY]" in line for line in lines), "the echo was stored, redacted"
    assert any("aws: [REDACTED:AWS Access Key]" in line for line in lines)
    assert complete_signal.payload["summary"] == "done; found [REDACTED:AWS Access Key] in my notes"
    on_disk = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
    assert API_KEY.encode() not in on_disk
    assert AWS_KEY.encode() not in on_disk
    assert AWS_SECRET.encode() not in on_disk
