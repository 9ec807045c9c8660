"""How the gates read an agent's report: payload models by their wire names, and which bad field is dropped.

Written against mutmut's survivors (make mutation) in gates/models.py; everything goes through
`AgentReport.from_payload`, the way the gates read a `complete` signal.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pm_agent.gates.models import AgentReport


class _WireReport(BaseModel):
    """A payload model whose Python names differ from its wire names and whose values are not JSON types."""

    model_config = ConfigDict(populate_by_name=True)

    created: list[Path] = Field(default_factory=list, alias="filesCreated")
    note: str = Field(default="", alias="summary")


def test_a_payload_model_is_read_by_its_wire_names_in_json_form() -> None:
    payload = _WireReport(created=[Path("src/a.py"), Path("tests/test_a.py")], note="done")
    report = AgentReport.from_payload(payload)
    assert report.files_created == ["src/a.py", "tests/test_a.py"]
    assert report.summary == "done"
    assert report.problems == []


def test_a_bad_snake_case_field_is_dropped_and_the_others_kept() -> None:
    report = AgentReport.from_payload({"files_created": 5, "files_modified": ["b.py"], "summary": "s"})
    assert report.files_created == []
    assert report.files_modified == ["b.py"]
    assert report.summary == "s"
    assert report.problems == ["files_created: Input should be a valid list"]


def test_a_bad_one_word_field_is_dropped_and_the_others_kept() -> None:
    report = AgentReport.from_payload({"summary": 5, "filesModified": ["b.py"], "risks": "r"})
    assert report.summary == ""
    assert report.files_modified == ["b.py"]
    assert report.risks == ["r"]
    assert report.problems == ["summary: Input should be a valid string"]


def test_bad_fields_in_both_spellings_are_all_named_once() -> None:
    report = AgentReport.from_payload(
        {"tests_claimed_passing": "maybe", "selfAssessment": 3, "files_deleted": ["c.py"]}
    )
    assert report.files_deleted == ["c.py"]
    assert report.tests_claimed_passing is None
    assert report.self_assessment is None
    assert sorted(report.problems) == [
        "selfAssessment: Input should be a valid string",
        "tests_claimed_passing: Input should be a valid boolean, unable to interpret input",
    ]
