"""The offline demo: a small Python project, its plan, and a scripted model that does the work.

- `build_demo_repo(dest)` creates the textstats repository: skeleton, design doc, plan, pm-agent.yaml.
- `DemoBrain()` is the model: `ModelServer(fallback=DemoBrain())` answers the real Claude Code CLI for
  every role of every task of that plan.
- `DEMO_ANSWERS` holds the scripted human's answers to the agents' questions, by task ref.
- `DEMO_TASKS` is the plan as data (`DemoTask.final_files()` gives what the agents write).
"""

from __future__ import annotations

from pm_agent.demo.brain import DemoBrain, SessionHeader, parse_session_header, session_header
from pm_agent.demo.project import DemoRepo, apply_files, build_demo_repo
from pm_agent.demo.tasks import DEMO_ANSWERS, DEMO_TASKS, DemoTask, demo_task

__all__ = [
    "DEMO_ANSWERS",
    "DEMO_TASKS",
    "DemoBrain",
    "DemoRepo",
    "DemoTask",
    "SessionHeader",
    "apply_files",
    "build_demo_repo",
    "demo_task",
    "parse_session_header",
    "session_header",
]
