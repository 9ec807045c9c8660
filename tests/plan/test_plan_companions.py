"""The documents beside a Kiro or Spec Kit tasks.md (plan/companions.py): named in each task's body for the
agent, and the design doc by default (Kiro's design.md, Spec Kit's plan.md). The layouts are the tools' own
(`.kiro/specs/<name>/`, `specs/001-name/`); the task lists are our fixtures in those forms."""

from __future__ import annotations

import shutil
from pathlib import Path

from pm_agent.plan import load_plan

FORMS = Path(__file__).parent / "fixtures" / "forms"


def _spec(root: Path, fixture: str, folder: str, docs: list[str]) -> Path:
    spec = root / folder
    spec.mkdir(parents=True)
    shutil.copy(FORMS / fixture, spec / "tasks.md")
    for name in docs:
        if name.endswith("/"):
            (spec / name).mkdir()
        else:
            (spec / name).write_text(f"# {name}\n", encoding="utf-8")
    return spec / "tasks.md"


def test_a_kiro_spec_names_its_requirements_and_design(tmp_path: Path) -> None:
    tasks_md = _spec(tmp_path, "kiro-tasks.md", ".kiro/specs/user-auth", ["requirements.md", "design.md"])
    plan = load_plan(tasks_md, repo=tmp_path)
    assert plan.design_path == str(tasks_md.parent / "design.md")
    note = "The task list's folder, `.kiro/specs/user-auth/`, also holds requirements.md and design.md"
    assert all(note in task.body for task in plan.tasks)
    assert plan.tasks[0].body.split("\n")[2].startswith(note)  # right after the heading


def test_a_spec_kit_feature_names_its_documents_and_takes_its_plan_as_design(tmp_path: Path) -> None:
    docs = ["spec.md", "plan.md", "data-model.md", "research.md", "contracts/"]
    tasks_md = _spec(tmp_path, "speckit-tasks.md", "specs/001-photo-albums", docs)
    plan = load_plan(tasks_md, repo=tmp_path)
    assert plan.design_path == str(tasks_md.parent / "plan.md")
    assert plan.plan_id == "001-photo-albums"
    note = "`specs/001-photo-albums/`, also holds spec.md, plan.md, research.md, data-model.md and contracts/:"
    assert note in plan.tasks[0].body


def test_a_given_design_doc_wins_and_a_lone_task_list_is_left_as_it_is(tmp_path: Path) -> None:
    tasks_md = _spec(tmp_path, "kiro-tasks.md", "a", ["design.md"])
    mine = tmp_path / "mine.md"
    mine.write_text("# mine\n", encoding="utf-8")
    assert load_plan(tasks_md, mine).design_path == str(mine)
    lone = _spec(tmp_path, "kiro-tasks.md", "b", [])
    plan = load_plan(lone)
    assert plan.design_path is None
    assert not any("also holds" in task.body for task in plan.tasks)
    other = tmp_path / "c" / "kiro.md"  # not named tasks.md: no spec folder
    other.parent.mkdir()
    shutil.copy(FORMS / "kiro-tasks.md", other)
    (other.parent / "design.md").write_text("# d\n", encoding="utf-8")
    assert load_plan(other).design_path is None
