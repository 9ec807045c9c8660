"""Task Master's tasks.json as a plan (plan/taskmaster.py), and its statuses set to done at release.

The shapes are Task Master's, as met in public repositories' `.taskmaster/tasks/tasks.json` (tagged under
`master`, ids as numbers or strings, subtasks with their own ids and `"3.2"` dependencies, statuses done,
pending, in-progress, deferred) and an older `{"tasks": [...]}` file; the texts are our own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import load_plan
from pm_agent.plan.taskmaster import mark_done


def _task(task_id: int | str, title: str, status: str = "pending", deps: list[Any] | None = None, **more: Any) -> Any:
    return {
        "id": task_id,
        "title": title,
        "description": f"{title}, described.",
        "details": f"How to do {title.lower()}.",
        "testStrategy": f"Unit tests for {title.lower()}.",
        "priority": "high",
        "dependencies": deps or [],
        "status": status,
        "subtasks": more.pop("subtasks", []),
        **more,
    }


TASKS = [
    _task(1, "Scaffold the package", "done"),
    _task(
        2,
        "Add the parser",
        deps=[1],
        subtasks=[
            {"id": 1, "title": "Tokenizer", "description": "Split the input", "status": "done", "dependencies": []},
            {"id": 2, "title": "Grammar", "description": "Read the tokens", "details": "Descent.", "status": ""},
        ],
    ),
    _task("3", "Add the printer", "in-progress", deps=["2.2"]),
    _task(4, "Theme support", "deferred"),
    _task(5, "Wire the CLI", deps=[2, 3, 4]),
]


def _folder(root: Path, data: Any, *, prd: str | None = "prd.txt", state: str | None = None) -> Path:
    folder = root / ".taskmaster"
    (folder / "tasks").mkdir(parents=True)
    (folder / "tasks" / "tasks.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if prd:
        (folder / "docs").mkdir()
        (folder / "docs" / prd).write_text("# PRD\n\nA parser and a printer.\n", encoding="utf-8")
    if state:
        (folder / "state.json").write_text(json.dumps({"currentTag": state}), encoding="utf-8")
    return folder


def test_the_tasks_left_to_do_with_their_dependencies(tmp_path: Path) -> None:
    plan = load_plan(_folder(tmp_path, {"master": {"tasks": TASKS, "metadata": {}}}))
    assert [t.id for t in plan.tasks] == ["2", "3", "5"]
    assert [t.title for t in plan.tasks] == ["Add the parser", "Add the printer", "Wire the CLI"]
    deps = {t.id: [d.task_id for d in t.depends_on] for t in plan.tasks}
    assert deps == {"2": [], "3": ["2"], "5": ["2", "3"]}  # task 1 done, 4 deferred: met; `2.2` is task 2's
    assert plan.queue == ["2", "3", "5"]
    assert plan.plan_id == "taskmaster"
    assert plan.header.title == "Task Master: master"
    assert Path(plan.design_path or "").name == "prd.txt"
    said = "\n".join(plan.warnings)
    assert "task 1 'Scaffold the package' is done: not run" in said
    assert "task 4 'Theme support' is deferred: not run" in said


def test_a_blocked_task_and_every_task_waiting_for_it_are_not_run(tmp_path: Path) -> None:
    tasks = [
        _task(1, "Parser"),
        _task(2, "Payment provider", "blocked"),  # waits for an account, says Task Master
        _task(3, "Checkout", deps=[2]),
        _task(4, "Receipts", deps=["3.1", 1]),  # through task 3's subtask: task 3, which waits for 2
        _task(5, "Printer", deps=[1]),
        _task(6, "Refunds", deps=[7]),  # listed before the task it waits for, which waits for 2
        _task(7, "Invoices", deps=[2]),
    ]
    folder = _folder(tmp_path, {"master": {"tasks": tasks}})
    plan = load_plan(folder)
    assert [t.id for t in plan.tasks] == ["1", "5"]
    said = "\n".join(plan.warnings)
    assert "task 2 'Payment provider' is blocked in Task Master: not run" in said
    assert "task 3 'Checkout' waits for task 2, which is blocked: not run" in said
    assert "task 4 'Receipts' waits for task 2, which is blocked: not run" in said
    assert "task 6 'Refunds' waits for task 2, which is blocked: not run" in said
    listed = (folder / "tasks" / "tasks.json").read_text(encoding="utf-8").split("\n")
    at = next(n for n, line in enumerate(listed, start=1) if '"title": "Payment provider"' in line)
    assert f"tasks.json:{at}: task 2 'Payment provider'" in said  # at its title's line


def test_a_list_with_only_blocked_work_left_says_so(tmp_path: Path) -> None:
    tasks = [_task(1, "Done", "done"), _task(2, "Provider", "blocked"), _task(3, "Checkout", deps=[2])]
    said = "no tasks to run: the 2 task(s) left are blocked or wait for one that is"
    with pytest.raises(PlanError, match=re.escape(said)):
        load_plan(_folder(tmp_path, {"master": {"tasks": tasks}}))


def test_a_task_carries_what_task_master_holds_of_it(tmp_path: Path) -> None:
    parser = load_plan(_folder(tmp_path, {"master": {"tasks": TASKS}})).tasks[0]
    assert parser.acceptance_criteria == ["2.2 Grammar: Read the tokens"]  # the subtask left to do
    assert parser.tests_to_add == ["Unit tests for add the parser."]
    assert parser.body.startswith("### Task 2: Add the parser\n\nAdd the parser, described.")
    assert "- [x] 2.1 Tokenizer: Split the input" in parser.body
    assert "- [ ] 2.2 Grammar: Read the tokens\n  Descent." in parser.body
    assert "**Test strategy:**\nUnit tests for add the parser." in parser.body
    text = (tmp_path / ".taskmaster" / "tasks" / "tasks.json").read_text(encoding="utf-8")
    assert text.splitlines()[parser.line - 1].strip() == '"title": "Add the parser",'
    printer = load_plan(_folder(tmp_path / "b", {"master": {"tasks": TASKS}})).tasks[1]
    assert printer.acceptance_criteria == ["Add the printer, described."]  # no subtasks: its description


def test_the_tasks_json_file_and_an_older_bare_list(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"tasks": TASKS[:2]}, prd=None)
    plan = load_plan(folder / "tasks" / "tasks.json")
    assert [t.id for t in plan.tasks] == ["2"]
    assert plan.design_path is None


def test_the_current_tag_is_state_jsons(tmp_path: Path) -> None:
    data = {"master": {"tasks": TASKS[:2]}, "feature-x": {"tasks": [_task(7, "Export")]}}
    plan = load_plan(_folder(tmp_path, data, state="feature-x"))
    assert [t.id for t in plan.tasks] == ["7"]
    assert plan.plan_id == "taskmaster-feature-x"
    with pytest.raises(PlanError, match=r"several tags \(feature-x, other\) and none is current"):
        load_plan(_folder(tmp_path / "b", {"other": {"tasks": []}, "feature-x": {"tasks": []}}))


def test_a_prd_named_for_the_project_is_the_design_doc(tmp_path: Path) -> None:
    plan = load_plan(_folder(tmp_path, {"master": {"tasks": TASKS}}, prd="shop-prd-v1.txt"))
    assert Path(plan.design_path or "").name == "shop-prd-v1.txt"


@pytest.mark.parametrize(
    ("data", "said", "line"),
    [
        ({"master": {"tasks": [_task(1, "A", "done")]}}, "no tasks to run: all 1 task(s) are done", None),
        ({"master": {"tasks": [_task(1, "A", deps=[9])]}}, "task 1 depends on task 9, which the list does not", 6),
        ({"master": {"tasks": [_task(1, "A"), _task(1, "B")]}}, "task 1 is listed twice", None),
        ({"master": {"tasks": [{"id": 1}]}}, "a task without an id or a title", 1),
        ({"settings": {}}, "no `tasks` list in it", 1),
    ],
)
def test_bad_lists_say_why(tmp_path: Path, data: Any, said: str, line: int | None) -> None:
    with pytest.raises(PlanError, match=re.escape(said)) as caught:
        load_plan(_folder(tmp_path, data))
    assert caught.value.line == line


def test_not_json_names_the_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {})
    (folder / "tasks" / "tasks.json").write_text('{\n  "master": {\n    "tasks": [,]\n', encoding="utf-8")
    with pytest.raises(PlanError, match="not JSON") as caught:
        load_plan(folder)
    assert caught.value.line == 3


def test_a_folder_without_its_tasks(tmp_path: Path) -> None:
    (tmp_path / ".taskmaster").mkdir()
    with pytest.raises(PlanError, match=r"without tasks/tasks.json \(parse-prd writes it\)"):
        load_plan(tmp_path / ".taskmaster")


def test_mark_done_marks_the_tag_that_ran(tmp_path: Path) -> None:
    data = {"master": {"tasks": [_task(1, "A")]}, "feature-x": {"tasks": [_task(1, "B")]}}
    listed = _folder(tmp_path, data, state="feature-x") / "tasks" / "tasks.json"
    marked, count = mark_done(listed.read_text(encoding="utf-8"), ["1"], listed)
    assert count == 1
    assert [json.loads(marked)[tag]["tasks"][0]["status"] for tag in data] == ["pending", "done"]


def test_mark_done_sets_the_statuses_as_task_master_writes_them() -> None:
    text = json.dumps({"master": {"tasks": TASKS}}, indent=2, ensure_ascii=False) + "\n"
    marked, count = mark_done(text, ["2", "3"], Path("tasks.json"))
    assert count == 3  # task 2, its pending subtask 2.2, and task 3; 2.1 was done already
    tasks = json.loads(marked)["master"]["tasks"]
    assert [t["status"] for t in tasks] == ["done", "done", "done", "deferred", "pending"]
    assert [s["status"] for s in tasks[1]["subtasks"]] == ["done", "done"]
    changed = [n for n, (a, b) in enumerate(zip(text.splitlines(), marked.splitlines(), strict=True)) if a != b]
    assert len(changed) == 3  # Task Master's own layout: three status lines change, nothing else


@pytest.mark.parametrize(
    "text",
    ['{"master": {"tasks": [{"id": 1, "title": "A", "status": "pending"}]}}', "not json", '{\n  "tasks": 1\n}'],
)
def test_mark_done_leaves_alone_what_it_would_reformat_or_cannot_read(text: str) -> None:
    assert mark_done(text, ["1"], Path("tasks.json")) == (text, 0)


def test_the_loop_watches_the_task_list_of_a_taskmaster_folder(tmp_path: Path) -> None:
    """A `.taskmaster` folder's plan is its tasks.json (engine/planfiles.py): an edit to it is a plan edit."""
    from pm_agent.engine.planfiles import content_sha, fingerprint

    folder = _folder(tmp_path, {"master": {"tasks": TASKS}})
    listed = folder / "tasks" / "tasks.json"
    assert [name for name, _, _ in fingerprint(folder)] == [str(listed)]
    before = content_sha(folder)
    listed.write_text(listed.read_text(encoding="utf-8").replace("Wire the CLI", "Wire the TUI"), encoding="utf-8")
    assert content_sha(folder) != before
