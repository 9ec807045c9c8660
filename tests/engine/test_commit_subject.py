"""Commit subjects: the task title as a conventional-commit description, acronyms and names kept."""

from __future__ import annotations

import pytest

from pm_agent.engine.commit_message import commit_message, subject_description
from pm_agent.plan import Task


@pytest.mark.parametrize(
    ("title", "description"),
    [
        ("CSV exporter", "CSV exporter"),
        ("API routes", "API routes"),
        ("I/O layer", "I/O layer"),
        ("OAuth login", "OAuth login"),
        ("GitHub webhook receiver", "GitHub webhook receiver"),
        ("S3 upload", "S3 upload"),
        ("Docker image for the worker", "Docker image for the worker"),
        ("Python 3.12 upgrade", "Python 3.12 upgrade"),
        ("Add the parser.", "add the parser"),
        ("Tokenizer", "tokenizer"),
        ("A CSV exporter", "a CSV exporter"),
        ("  Word counts  ", "word counts"),
        ("", ""),
    ],
)
def test_first_word_is_lowered_unless_an_acronym_or_a_name(title: str, description: str) -> None:
    assert subject_description(title) == description


def test_commit_message_keeps_the_acronym_in_the_subject() -> None:
    task = Task(id="3", title="CSV exporter", ownership="ledger")
    message = commit_message(task, ".pm-agent/reviews/task-3.md")
    assert message == "feat(ledger): CSV exporter\n\nRefs: task-3\nReview: .pm-agent/reviews/task-3.md\n"
