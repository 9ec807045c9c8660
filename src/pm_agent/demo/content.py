"""The demo's content, shipped as package data (`demo/data/`) and read with importlib.resources.

- `data/textstats/*.txt`: whole files of the sample project "textstats", as the scripted agents
  write them (the `.txt` suffix keeps ruff, mypy and pytest from taking them for our own code).
- `data/tasks.yaml`: the plan's tasks, what each agent writes and reports, the scripted answers.
- `data/design.md.txt`, `data/plan-header.md.txt`: the design doc and the plan's header.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml

from pm_agent.errors import InputError

__all__ = ["demo_text", "project_file", "tasks_document"]


def demo_text(name: str) -> str:
    """The text of `data/<name>`."""
    return resources.files("pm_agent.demo").joinpath("data", name).read_text(encoding="utf-8")


@cache
def project_file(name: str) -> str:
    """One file of the sample project: `data/textstats/<name>.txt`."""
    return demo_text(f"textstats/{name}.txt")


@cache
def tasks_document() -> dict[str, Any]:
    """`data/tasks.yaml` parsed: `tasks` (a list of task mappings) and `answers` (task ref -> answer)."""
    data = yaml.safe_load(demo_text("tasks.yaml"))
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise InputError("the demo's tasks.yaml has no list of tasks")
    return data
