"""The front door: `pm-agent new "REQUEST"` (seed 004's ChaosWhisperer and PathSeeker before a plan exists).

An analyst session writes the locked BDD requirements, a planner session the plan pm-agent parses
with its own parser (errors go back to the same session), the human approves (or edits, or
aborts), both documents are committed on the working branch, and the plan runs as `pm-agent run`
runs it. `start.py` says why the intake is a run of its own.
"""

from __future__ import annotations

from pm_agent.intake.agents import Phase
from pm_agent.intake.docs import IntakePaths, check_plan, requirements_hash, requirements_problems, scenario_ids
from pm_agent.intake.start import RequestResult, intake_run_of, new_request, resume_request

__all__ = [
    "IntakePaths",
    "Phase",
    "RequestResult",
    "check_plan",
    "intake_run_of",
    "new_request",
    "requirements_hash",
    "requirements_problems",
    "resume_request",
    "scenario_ids",
]
