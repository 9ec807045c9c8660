"""Lines of a Files list that are no plain `Create:`/`Modify:` entry: a kind word with a qualifier is that kind,
files the task reads stay in the description, an area label before a path modifies it, and anything else is kept
in the description with a warning (never dropped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.plan import Plan, fastpath, load_plan
from pm_agent.plan.file_prose import read_file_prose
from pm_agent.plan.models import ExpectedFiles

PROSE = Path(__file__).parent / "fixtures" / "forms" / "files-list-prose.md"


def _load(path: Path, fast: bool) -> Plan:
    fastpath.ENABLED = fast
    try:
        return load_plan(path)
    finally:
        fastpath.ENABLED = True


@pytest.fixture(params=[True, False], ids=["fast", "markdown-it"])
def plan(request: pytest.FixtureRequest) -> Plan:
    return _load(PROSE, request.param)


def test_qualified_kinds_keep_their_kind_and_areas_modify(plan: Plan) -> None:
    files = plan.task("1").expected_files
    assert files.create == ["billing/reminder_schedule.py"]
    assert files.modify == ["jobs/nightly.py", "billing/api.py", "billing/models.py"]


def test_files_only_read_are_no_expected_files(plan: Plan) -> None:
    paths = plan.task("1").expected_files.all_paths()
    assert "docs/billing-rules.md" not in paths
    assert "billing/legacy_reminders.py" not in paths


def test_read_lines_and_qualified_entries_stay_in_the_description(plan: Plan) -> None:
    assert plan.task("1").description.split("\n\n") == [
        "- Read: `docs/billing-rules.md`",
        "- Reference: `billing/legacy_reminders.py` (lines 40-90)",
        "- Maybe create: `billing/reminder_schedule.py`",
        "- Modify (only if the nightly job keeps its lock): `jobs/nightly.py`",
        "Send a reminder seven days before an invoice is due.",
    ]


def test_no_code_changes_is_kept_without_a_warning(plan: Plan) -> None:
    task = plan.task("2")
    assert task.expected_files.all_paths() == []
    assert task.description.startswith("- No code changes in this task.")
    assert not [w for w in plan.warnings if f"{PROSE}:19:" in w]


def test_prose_and_uncommitted_files_are_kept_and_named(plan: Plan) -> None:
    task = plan.task("3")
    assert task.expected_files.all_paths() == ["billing/templates/reminder.html"]
    assert task.description.split("\n\n") == [
        "- Update: the support macro in the helpdesk",
        "- Create (scratch, not committed): `tmp/preview.html`",
        "- Context: the first draft lives in `drafts/reminder.txt`",
    ]


def test_every_line_read_with_a_qualifier_or_left_unread_is_a_warning(plan: Plan) -> None:
    assert plan.warnings == [
        f"{PROSE}:9: 'Maybe create' read as Create billing/reminder_schedule.py; the qualifier ('Maybe') is kept in "
        "the description",
        f"{PROSE}:10: 'Modify (only if the nightly job keeps its lock)' read as Modify jobs/nightly.py; the qualifier "
        "('only if the nightly job keeps its lock') is kept in the description",
        f"{PROSE}:25: 'Update: the support macro in the helpdesk' in the Files list is not read as a file: kept in the "
        "description",
        f"{PROSE}:26: 'Create (scratch, not committed)' (tmp/preview.html) names no file of the repository: no file "
        "expected, kept in the description",
    ]


@pytest.mark.parametrize(
    ("text", "code", "expected", "keep", "warned"),
    [
        ("Possibly create: a.py", ("a.py",), {"create": ["a.py"]}, True, True),
        ("Optionally modify: a.py, b.py", ("a.py", "b.py"), {"modify": ["a.py", "b.py"]}, True, True),
        ("Modify (only if needed): src/b.py", ("src/b.py",), {"modify": ["src/b.py"]}, True, True),
        ("Rewrite: docs/guide.md", ("docs/guide.md",), {"modify": ["docs/guide.md"]}, False, False),
        ("New tests: tests/test_a.py", ("tests/test_a.py",), {"test": ["tests/test_a.py"]}, True, True),
        ("Backend: app/api.py", ("app/api.py",), {"modify": ["app/api.py"]}, False, False),
        ("Web app: web/src/App.tsx", ("web/src/App.tsx",), {"modify": ["web/src/App.tsx"]}, False, False),
        ("Read: docs/api.md", ("docs/api.md",), {}, True, False),
        ("Read-only audit: vitest.config.ts", ("vitest.config.ts",), {}, True, False),
        ("See: src/x.py", ("src/x.py",), {}, True, False),
        ("Keep: scripts/run.sh", ("scripts/run.sh",), {}, True, False),
        ("No code changes", (), {}, True, False),
        ("(none)", (), {}, True, False),
        ("Optional later: notes.md", ("notes.md",), {}, True, True),  # no kind, and no area: unread
        ("Candidate files: a/b.yaml", ("a/b.yaml",), {}, True, True),
        ("Test command: pytest tests/a.py", ("pytest tests/a.py",), {}, True, True),  # a command, not a file
        ("Update: PR #12 body", (), {}, True, True),
        ("the loader, wherever it is", (), {}, True, True),
        ("Possibly modify: scripts/*", ("scripts/*",), {"modify": ["scripts/*"]}, True, True),
    ],
)
def test_read_file_prose(
    text: str, code: tuple[str, ...], expected: dict[str, list[str]], keep: bool, warned: bool
) -> None:
    files = ExpectedFiles()
    prose = read_file_prose(files, text, code)
    assert {k: v for k, v in files.model_dump().items() if v and k != "modify_ranges"} == expected
    assert (prose.keep, prose.warning is not None) == (keep, warned)


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "markdown-it"])
def test_a_field_the_files_list_cannot_read_is_warned_once_and_kept(tmp_path: Path, fast: bool) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("# P\n\n## Task 1: A\n**Files:**\n- Modify: `a.py`\n- Tier: extreme\n")
    plan = _load(plan_file, fast)
    assert plan.task("1").description == "- Tier: extreme"
    assert len(plan.warnings) == 1
    assert "'Tier: extreme' is not read as a field" in plan.warnings[0]


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "markdown-it"])
def test_a_dependency_bullet_still_ends_the_files_list(tmp_path: Path, fast: bool) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(
        "# P\n\n## Task 1: A\n**Files:**\n- Modify: `a.py`\n\n## Task 2: B\n**Files:**\n- Modify: `b.py`\n"
        "- **Depends on:** Task 1\n"
    )
    plan = _load(plan_file, fast)
    assert [d.task_id for d in plan.task("2").depends_on if not d.inferred] == ["1"]
    assert plan.task("2").description == ""
    assert plan.warnings == []
