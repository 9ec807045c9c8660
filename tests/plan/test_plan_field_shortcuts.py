"""The field readers' shortcuts (`read_refs` for `Task 3, Task 5` and `Task 3 (prose)`, `add_file_entry` for
`Create: `src/a.py``) give what the full readings give, on values built from tricky pieces."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TypeVar

from pm_agent.plan import fastpath
from pm_agent.plan.fields import _PLAIN_PATH, add_file_entry, canonical_id
from pm_agent.plan.models import ExpectedFiles
from pm_agent.plan.refs import _NOTED_REF, _SIMPLE_REFS, read_refs

T = TypeVar("T")
REF_PIECES = (
    "Task 3", "Task 12", "Task 007", ", ", ",", " , ", " and ", " (", ")", "(", "needs", " its ", "cache", "2",
    "Tasks 4-6", "none", ".", " ", "task 5", "&", "+", ";", "é", "：", "-", "AND",
)  # fmt: skip
PATH_PIECES = (
    "src", "/", "./", "../", ".", "a.py", ".env", "//", "/./", ":", "12-40", ",", ";", "'", "\"", " ", "：", "x",
    "é", "-", "_", "tests", "\t",
)  # fmt: skip
KINDS = ("Create: ", "Modify: ", "Test: ", "Delete:", "create :", "Notes: ", "Create ", "Create：", "")


def _slow(read: Callable[..., T], *args: object) -> T:
    fastpath.ENABLED = False
    try:
        return read(*args)
    finally:
        fastpath.ENABLED = True


def _read(value: str) -> object:
    try:
        return read_refs(value)
    except ValueError as exc:
        return str(exc)


def test_references_read_the_same_both_ways() -> None:
    rng = random.Random(3)
    shortcut = 0
    for _ in range(20_000):
        value = "".join(rng.choice(REF_PIECES) for _ in range(rng.randint(1, 6)))
        if rng.random() < 0.5:  # the shapes the shortcuts take, with a piece more here and there
            words = "".join(rng.choice(("needs", " its", " cache", " 2", " ", " and", "AND", ".")) for _ in range(3))
            head = rng.choice(("Task 3, Task 5", "Task 03, Task 3, Task 12", f"Task 4 ({words})", "Task 4 ()"))
            value = rng.choice(("", " ")) + head + (value if rng.random() < 0.3 else rng.choice(("", " ", "\n")))
        assert _read(value) == _slow(_read, value), value
        shortcut += bool(_SIMPLE_REFS.fullmatch(value.strip()) or _NOTED_REF.fullmatch(value.strip()))
    assert shortcut > 200  # the shortcuts were met, not only the full reading


def _entry(text: str, code: tuple[str, ...]) -> tuple[bool, dict[str, object]]:
    files = ExpectedFiles()
    added = add_file_entry(files, text, code)
    return added, files.model_dump()


def test_file_entries_read_the_same_both_ways() -> None:
    rng = random.Random(4)
    shortcut = 0
    for _ in range(20_000):
        path = "".join(rng.choice(PATH_PIECES) for _ in range(rng.randint(1, 5)))
        text = f"{rng.choice(KINDS)}{rng.choice(('', ' ', '  '))}{path}{rng.choice(('', ' ', ' (x)'))}"
        code = (path,) if rng.random() < 0.9 else (path, "x.py")
        assert _entry(text, code) == _slow(_entry, text, code), (text, code)
        shortcut += len(code) == 1 and _PLAIN_PATH.fullmatch(path) is not None
    assert shortcut > 2_000


ID_PIECES = ("1", "2", "0", "9", "12", "007", "a", "A", "-", ".", "task", "Task-", " ", "²", "٣", "ß", "_", "x")


def test_task_ids_key_the_same_both_ways() -> None:
    # canonical_id returns a plain id (`12`) as it is; its cache is bypassed to compare the readings.
    rng = random.Random(4)
    plain = 0
    for _ in range(20_000):
        task_id = "".join(rng.choice(ID_PIECES) for _ in range(rng.randint(1, 4)))
        assert canonical_id.__wrapped__(task_id) == _slow(canonical_id.__wrapped__, task_id), task_id
        plain += task_id.isdigit() and task_id.isascii() and task_id[0] != "0"
    assert plain > 1_000  # the shortcut is taken, not only the full reading
