"""The final review's rounds as stored: which findings open remediation tasks and which go to a human,
rounds reused for the head they reviewed, the committed document. No agent session runs here: the
rounds are stored as a finished session would have stored them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pm_agent.engine import final_review
from pm_agent.engine.final_review import CONTAINER, ROUND, resolve, run_review
from pm_agent.engine.release_audit import free_id, remediation
from pm_agent.engine.review_findings import Finding, dump_findings, format_help
from pm_agent.engine.runctx import RunContext
from pm_agent.plan.models import Tier

from .calc_plan import ADDITION, plan
from .conftest import Target, git

HIGH = Finding(id="F1", severity="high", file="src/calc/add.py", line=4, finding="no docstring", fix="add one")
LOW = Finding(id="F2", severity="low", file="README.md", finding="add() is not mentioned")
CRITICAL = Finding(id="F3", severity="critical", finding="secrets in the log")


def store_round(rc: RunContext, number: int, head: str, findings: list[Finding]) -> None:
    final_review.container(rc)
    payload = {"round": number, "head": head, "findings": dump_findings(findings), "summary": f"round {number}"}
    rc.store.append_event(rc.run_id, ROUND, {**payload, "text": "as written", "session": None}, task_id=CONTAINER)


def test_fix_severities_get_tasks_while_rounds_are_left(target: Callable[[str], Target]) -> None:
    t = target(plan(ADDITION))
    rc = t.start()
    try:
        head = rc.git.rev_parse(rc.run.working_branch)
        store_round(rc, 1, head, [HIGH, LOW])
        review = asyncio.run(run_review(rc))
        assert (review.status, review.to_fix, review.to_ask) == ("findings", [HIGH], [LOW])
        assert review.round is not None
        assert review.round.number == 1
        assert review.round.summary == "round 1"
        # Resolved findings are not offered again for the same head.
        resolve(rc, 1, [HIGH], "remediated by task-r1")
        again = asyncio.run(run_review(rc))
        assert (again.to_fix, again.to_ask) == ([], [LOW])
        resolve(rc, 1, [LOW], "accepted by a human (escalation #1)")
        assert asyncio.run(run_review(rc)).to_ask == []
        # The container is completed and holds no plan work: the loop never dispatches it.
        rec = rc.store.get_task(rc.run_id, CONTAINER)
        assert (rec.state, rec.commit_sha) == ("completed", None)
    finally:
        rc.store.close()


def test_the_last_round_sends_every_finding_to_the_human(target: Callable[[str], Target]) -> None:
    t = target(plan(ADDITION))
    rc = t.start(final_review={"max_rounds": 2})
    try:
        head = rc.git.rev_parse(rc.run.working_branch)
        store_round(rc, 1, "0" * 40, [HIGH])
        store_round(rc, 2, head, [CRITICAL, LOW])
        review = asyncio.run(run_review(rc))
        assert review.round is not None
        assert review.round.number == 2
        assert (review.to_fix, review.to_ask) == ([], [CRITICAL, LOW])
    finally:
        rc.store.close()


def test_off_and_clean(target: Callable[[str], Target]) -> None:
    t = target(plan(ADDITION))
    rc = t.start(final_review={"enabled": False})
    try:
        assert asyncio.run(run_review(rc)).status == "off"
        rc.config = rc.config.model_copy(
            update={"final_review": rc.config.final_review.model_copy(update={"enabled": True})}
        )
        store_round(rc, 1, rc.git.rev_parse(rc.run.working_branch), [])
        clean = asyncio.run(run_review(rc))
        assert (clean.status, clean.to_fix, clean.to_ask) == ("clean", [], [])
    finally:
        rc.store.close()


def test_remediation_tasks_and_the_document(target: Callable[[str], Target]) -> None:
    t = target(plan(ADDITION))
    rc = t.start()
    try:
        existing = {"1", "r1"}
        tasks = remediation(rc, 1, [HIGH, CRITICAL], existing)
        assert [(x.id, x.tier) for x in tasks] == [("r2", Tier.NORMAL), ("r3", Tier.CRITICAL)]
        assert tasks[0].title == "Fix final review finding F1: no docstring"
        assert tasks[0].body == "The final review (round 1) found in src/calc/add.py:4: no docstring\n\nFix: add one"
        assert tasks[1].body == "The final review (round 1) found: secrets in the log"
        assert free_id(existing) == "r4"
        store_round(rc, 1, "a" * 40, [HIGH])
        resolve(rc, 1, [HIGH], "remediated by task-r2")
        store_round(rc, 2, "b" * 40, [])
        text = final_review.render_review(rc)
        assert text.startswith("# Final review: calc\n")
        assert "| F1 | high | src/calc/add.py:4 | no docstring | add one | remediated by task-r2 |" in text
        assert "## Round 2 (head `bbbbbbbbbbbb`)\n\nround 2\n\nNo findings." in text
        assert text.endswith("## The last review as written (round 2)\n\nas written\n")
        assert final_review.review_path(rc) == "docs/reviews/calc-final-review.md"
    finally:
        rc.store.close()


def test_the_reviewers_prompt(target: Callable[[str], Target]) -> None:
    t = target(plan(ADDITION))
    (t.repo / "docs" / "req.md").write_text("Given two numbers, when added, then the sum.\n", encoding="utf-8")
    git(t.repo, "add", "docs/req.md")
    git(t.repo, "commit", "-q", "-m", "requirements")
    rc = t.start(final_review={"requirements_doc": "docs/req.md"})
    try:
        head = rc.git.rev_parse(rc.run.working_branch)
        earlier = [final_review.ReviewRound(1, "c" * 40, [HIGH], "", "", None)]
        final_review.container(rc)
        resolve(rc, 1, [HIGH], "remediated by task-r1")
        text = final_review.review_prompt(rc, 2, head, t.repo, earlier)
        assert "${" not in text
        assert f"`git diff {rc.run.baseline_sha[:12]}..HEAD`" in text
        assert "your review, `docs/reviews/calc-final-review.md`" in text
        assert "Review round 2. Earlier rounds found (check that each is fixed):" in text
        assert "- round 1 F1 (high) src/calc/add.py:4: no docstring → remediated by task-r1" in text
        assert "Requirements (docs/req.md):\nGiven two numbers, when added, then the sum." in text
        assert "(no design doc given)" in text
        assert 'Always pass stepId "task-final-review"' in text
        assert format_help() in text
    finally:
        rc.store.close()
