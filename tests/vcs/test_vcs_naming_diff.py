"""Branch and tag names, and the unified diff parser."""

from __future__ import annotations

import subprocess

import pytest

from pm_agent.vcs import (
    checkpoint_tag,
    is_protected_branch,
    parse_unified_diff,
    slugify,
    task_branch,
    working_branch,
)
from pm_agent.vcs.diff import unquote_path


def _valid_ref(name: str) -> bool:
    return subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True).returncode == 0


@pytest.mark.parametrize(
    ("plan_id", "task_id", "title", "expected"),
    [
        ("wellness-cbt", "07", "Voice pipeline", "feat/wellness-cbt/task-07-voice-pipeline"),
        ("wellness-cbt", "task-07", "Voice pipeline", "feat/wellness-cbt/task-07-voice-pipeline"),
        ("My Plan!", "3", "Add `Refs:` trailer & tag (v2)", "feat/my-plan/task-3-add-refs-trailer-tag-v2"),
        ("p", "1.2", "Ünïcode títle", "feat/p/task-1.2-unicode-title"),
        ("p", "9", "???", "feat/p/task-9"),
    ],
)
def test_task_branch(plan_id: str, task_id: str, title: str, expected: str) -> None:
    name = task_branch(plan_id, task_id, title)
    assert name == expected
    assert _valid_ref(name)


def test_slug_is_cut_at_a_word_boundary() -> None:
    slug = slugify("a very long title that keeps going well beyond the limit of forty characters")
    assert len(slug) <= 40
    assert not slug.endswith("-")
    assert slug.startswith("a-very-long-title")
    assert slugify("exactly-this", max_len=12) == "exactly-this"


def test_checkpoint_tag_and_working_branch() -> None:
    assert checkpoint_tag("wellness-cbt", "07") == "pm/wellness-cbt/checkpoint-task-07"
    assert checkpoint_tag("wellness-cbt", "task-07") == "pm/wellness-cbt/checkpoint-task-07"
    assert working_branch("Wellness CBT") == "pm/wellness-cbt/work"
    assert _valid_ref(checkpoint_tag("x", "..evil..lock"))
    assert is_protected_branch("main")
    assert is_protected_branch("refs/heads/master")
    assert not is_protected_branch("pm/x/work")
    with pytest.raises(ValueError, match="empty"):
        task_branch("p", "///", "t")


DIFF = """\
diff --git a/src/a.py b/src/a.py
index 1111111..2222222 100644
--- a/src/a.py
+++ b/src/a.py
@@ -2 +2 @@ def f():
-    return 1
+    return 2
@@ -10,0 +11,2 @@ def g():
+# TODO(task-3) later
+-- not a header
diff --git a/gone.sql b/gone.sql
deleted file mode 100644
--- a/gone.sql
+++ /dev/null
@@ -1,2 +0,0 @@
-CREATE TABLE t (id int);
--- a comment that starts with dashes
diff --git "a/sp ace\\303\\251.txt" "b/sp ace\\303\\251.txt"
new file mode 100644
--- /dev/null
+++ "b/sp ace\\303\\251.txt"
@@ -0,0 +1 @@
+hello
\\ No newline at end of file
diff --git a/img.png b/img.png
Binary files a/img.png and b/img.png differ
"""


def test_parse_unified_diff() -> None:
    parsed = parse_unified_diff(DIFF)
    assert parsed.added == {
        "src/a.py": [(2, "    return 2"), (11, "# TODO(task-3) later"), (12, "-- not a header")],
        "sp aceé.txt": [(1, "hello")],
    }
    assert parsed.removed == {
        "src/a.py": [(2, "    return 1")],
        "gone.sql": [(1, "CREATE TABLE t (id int);"), (2, "-- a comment that starts with dashes")],
    }


def test_unquote_path() -> None:
    assert unquote_path('"a\\tb\\"c\\\\d"') == 'a\tb"c\\d'
    assert unquote_path("plain name") == "plain name"
