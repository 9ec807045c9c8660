"""File entries without a Create/Modify word: bare paths, `(create)`/`(delete)` tags, `(lines 20-64)` ranges,
and the one-line `**File:**` label; prose in a Files list names no file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.plan import fastpath, fields, load_plan
from pm_agent.plan.models import ExpectedFiles

BARE = Path(__file__).parent / "fixtures" / "forms" / "bare-file-entries.md"


@pytest.fixture(params=["fast", "markdown-it"])
def bare_plan(request: pytest.FixtureRequest) -> dict[str, ExpectedFiles]:
    fastpath.ENABLED = request.param == "fast"
    try:
        plan = load_plan(BARE)
    finally:
        fastpath.ENABLED = True
    return {task.id: task.expected_files for task in plan.tasks}


def test_a_one_line_file_label_with_a_create_tag_creates(bare_plan: dict[str, ExpectedFiles]) -> None:
    assert bare_plan["1"].create == ["web/app/spinner.tsx"]
    assert bare_plan["1"].all_paths() == ["web/app/spinner.tsx"]


def test_bare_paths_in_a_files_list_are_modified_with_their_line_range(bare_plan: dict[str, ExpectedFiles]) -> None:
    files = bare_plan["2"]
    # `the retry helper, wherever it lives` names no file: none is made up for it.
    assert files.modify == ["jobs/price_sync.rb", "config/schedule.yml", "Procfile"]
    assert files.modify_ranges == {"jobs/price_sync.rb": "20-64"}
    assert files.create == files.delete == []


def test_tags_name_the_kind_and_an_ambiguous_one_modifies(bare_plan: dict[str, ExpectedFiles]) -> None:
    files = bare_plan["3"]
    assert files.modify == ["jobs/price_sync.rb"]  # `(DELETE or deprecate)`: not sure it goes
    assert files.delete == ["jobs/legacy_sync.rb"]
    assert files.create == ["jobs/price_sync_v2.rb"]  # and `e.g. the README ...` is no file


def test_a_label_under_a_one_line_file_label_takes_the_list(bare_plan: dict[str, ExpectedFiles]) -> None:
    """`**File:** \\`docs/sync.md\\`` then `**Do:**`: the list is what to do, not more files."""
    assert bare_plan["4"].all_paths() == ["docs/sync.md"]


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "markdown-it"])
def test_the_do_list_stays_in_the_description_and_tasks_on_one_file_are_ordered(fast: bool) -> None:
    fastpath.ENABLED = fast
    try:
        plan = load_plan(BARE)
    finally:
        fastpath.ENABLED = True
    by_id = {task.id: task for task in plan.tasks}
    assert "`Sync.run` is the entry point" in by_id["4"].description
    # Task 3 changes the file Task 2 changes: it waits for it (the files are what orders them).
    assert [(d.task_id, d.inferred) for d in by_id["3"].depends_on] == [("2", True)]


@pytest.mark.parametrize(
    ("text", "code", "expected"),
    [
        ("src/app.py — the handler", (), {"modify": ["src/app.py"]}),
        ("src/app.py — the handler (new)", (), {"create": ["src/app.py"]}),
        ("a.go (DELETE or deprecate)", ("a.go",), {"modify": ["a.go"]}),
        ("a.go (delete)", ("a.go",), {"delete": ["a.go"]}),
        ("a.go (New file)", ("a.go",), {"create": ["a.go"]}),
        ("a.go, b/c.go (remove)", ("a.go", "b/c.go"), {"modify": ["a.go"], "delete": ["b/c.go"]}),
        ("src/db.ts, migrations/", ("src/db.ts", "migrations/"), {"modify": ["src/db.ts", "migrations"]}),
        ("test/e2e.test.ts or CI workflow", ("test/e2e.test.ts",), {"modify": ["test/e2e.test.ts"]}),
        ("src/x.py:12-40 the loop", (), {"modify": ["src/x.py"]}),
        (".env.example", (".env.example",), {"modify": [".env.example"]}),
        ("Makefile", (), {"modify": ["Makefile"]}),
    ],
)
def test_bare_entries(text: str, code: tuple[str, ...], expected: dict[str, list[str]]) -> None:
    files = ExpectedFiles()
    assert fields.add_file_entry(files, text, code)
    assert {k: v for k, v in files.model_dump().items() if v and k != "modify_ranges"} == expected


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("the handler in src/app.py", ()),  # the path is not where the entry starts
        ("make runs the build", ("make",)),  # a command, not a file
        ("e.g. the config", ()),
        ("N/A", ()),
        ("and/or the tests", ()),
        ("1.5 seconds at most", ()),
        ('Context.Tag("Gallery") with interface:', ('Context.Tag("Gallery")',)),
        ("Frontend: src/app.tsx", ("src/app.tsx",)),  # a label that is no kind: left as it was
    ],
)
def test_prose_names_no_file(text: str, code: tuple[str, ...]) -> None:
    files = ExpectedFiles()
    assert not fields.add_file_entry(files, text, code)
    assert files.all_paths() == []


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "markdown-it"])
@pytest.mark.parametrize("label", ["**Files**:", "**Files:**", "Files:", "**File:**", "**文件：**"])
def test_every_spelling_of_the_files_label_reads_a_bare_list(tmp_path: Path, label: str, fast: bool) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(f"# P\n\n## Task 1: A\n{label}\n- `src/a.py` (lines 3-9)\n- `src/b.py` (create)\n")
    fastpath.ENABLED = fast
    try:
        files = load_plan(plan_file).tasks[0].expected_files
    finally:
        fastpath.ENABLED = True
    assert (files.modify, files.create, files.modify_ranges) == (["src/a.py"], ["src/b.py"], {"src/a.py": "3-9"})


def test_the_kind_words_still_lead(tmp_path: Path) -> None:
    """`Create:` entries read as before, and an inline `**Files:** Create: ...` is read too (it was dropped)."""
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# P\n\n## Task 1: A\n**Files:** Create: `src/a.py`\n\n## Task 2: B\n**Files:**\n- Delete: `x.py`\n"
    )
    tasks = load_plan(plan_file).tasks
    assert tasks[0].expected_files.create == ["src/a.py"]
    assert tasks[1].expected_files.delete == ["x.py"]
