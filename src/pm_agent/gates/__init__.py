"""Gates pm-agent runs itself: ward commands, the six minimum gates, integrity checks, tier review.

Never trusts an agent's claims: every verdict comes from the worktree, the diff and commands pm-agent
ran. Nor can the agent weaken the checks from inside its scope: suppressions, ignore entries, test
runner settings and vacuous tests fail `checks-weakened` or `tests-weakened` (see `weakened.py`).
Each gate is a plain function returning a `GateResult`; `run_minimum_gates`,
`run_integrity_checks` and `run_gates` (by id, for the fix loop) run several over one change set.
"""

from __future__ import annotations

from pm_agent.gates.alignment import gate_plan_alignment
from pm_agent.gates.commands import gate_lint_typecheck, gate_tests_added, gate_tests_run
from pm_agent.gates.common import is_ignored_path, is_test_path
from pm_agent.gates.environment import ENVIRONMENT_COMMANDS, Baseline, BaselineCommand, Verdict, judge
from pm_agent.gates.integrity import check_scope, check_tests_weakened, check_vcs_tampering
from pm_agent.gates.models import (
    INTEGRITY_CHECKS,
    MINIMUM_GATES,
    AgentReport,
    CriterionMapping,
    GateId,
    GateResult,
    Payload,
    ReviewNoteIn,
)
from pm_agent.gates.narrow import command_for_test_files
from pm_agent.gates.review import gate_review_note
from pm_agent.gates.runner import (
    GATES,
    GateContext,
    all_passed,
    failed_gates,
    make_context,
    run_gates,
    run_integrity_checks,
    run_minimum_gates,
)
from pm_agent.gates.secret_scan import check_secrets
from pm_agent.gates.tier_review import SanityResult, auto_escalate_tier, path_categories, sanity_check
from pm_agent.gates.todos import gate_no_orphan_todos
from pm_agent.gates.ward import CommandResult, TestCounts, parse_pytest_summary, run_command
from pm_agent.gates.weakened import gate_checks_weakened, gate_tests_weakened

__all__ = [
    "ENVIRONMENT_COMMANDS",
    "GATES",
    "INTEGRITY_CHECKS",
    "MINIMUM_GATES",
    "AgentReport",
    "Baseline",
    "BaselineCommand",
    "CommandResult",
    "CriterionMapping",
    "GateContext",
    "GateId",
    "GateResult",
    "Payload",
    "ReviewNoteIn",
    "SanityResult",
    "TestCounts",
    "Verdict",
    "all_passed",
    "auto_escalate_tier",
    "check_scope",
    "check_secrets",
    "check_tests_weakened",
    "check_vcs_tampering",
    "command_for_test_files",
    "failed_gates",
    "gate_checks_weakened",
    "gate_lint_typecheck",
    "gate_no_orphan_todos",
    "gate_plan_alignment",
    "gate_review_note",
    "gate_tests_added",
    "gate_tests_run",
    "gate_tests_weakened",
    "is_ignored_path",
    "is_test_path",
    "judge",
    "make_context",
    "parse_pytest_summary",
    "path_categories",
    "run_command",
    "run_gates",
    "run_integrity_checks",
    "run_minimum_gates",
    "sanity_check",
]
