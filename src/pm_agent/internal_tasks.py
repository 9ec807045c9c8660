"""The task rows pm-agent keeps for itself, named once for the engine and for the scripted agents.

Kept apart from `engine.final_review` (which uses it) so that the model server's process, which runs
the scripted team and the demo's brain, can name the final review's task without importing the engine.
"""

from __future__ import annotations

FINAL_REVIEW = "final-review"  # the task row holding the final review's sessions (no plan task has this id)
FINAL_REVIEW_STEP = f"task-{FINAL_REVIEW}"  # its stepId, as session headers and scripts name a task
