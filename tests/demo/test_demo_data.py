"""The demo's content is package data: every data file is used, every name tasks.yaml gives exists."""

from __future__ import annotations

from importlib import resources

from pm_agent.demo import DEMO_TASKS
from pm_agent.demo.content import tasks_document
from pm_agent.demo.project import skeleton_files


def _data_names() -> set[str]:
    folder = resources.files("pm_agent.demo").joinpath("data", "textstats")
    return {entry.name.removesuffix(".txt") for entry in folder.iterdir() if entry.name.endswith(".txt")}


def _named_in_tasks_yaml() -> set[str]:
    names: set[str] = set()
    for raw in tasks_document()["tasks"]:
        for key in ("files", "first_attempt"):
            names.update(raw.get(key, {}).values())
        for files in raw.get("files_by_format", {}).values():
            names.update(files.values())
    return names


def test_tasks_yaml_names_only_files_that_exist() -> None:
    named = _named_in_tasks_yaml()
    assert named, "tasks.yaml names no files"
    assert named <= _data_names(), sorted(named - _data_names())


def test_every_data_file_is_written_by_the_skeleton_or_a_task() -> None:
    skeleton = set(skeleton_files().values())
    used = {
        name
        for name in _data_names()
        if name in _named_in_tasks_yaml()
        or resources.files("pm_agent.demo").joinpath("data", "textstats", f"{name}.txt").read_text() in skeleton
    }
    assert used == _data_names(), sorted(_data_names() - used)


def test_the_tasks_are_the_nine_of_the_plan_in_order() -> None:
    assert [t.number for t in DEMO_TASKS] == list(range(1, 10))
    assert all(t.criteria and t.review.rollback for t in DEMO_TASKS)
