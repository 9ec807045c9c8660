"""Integrity checks where a one-token change would go unnoticed: scope rejections, scan order, each pattern.

Written against mutmut's survivors (make mutation): each test pins a behaviour the older tests only
showed from one side (things allowed, never refused) or not at all.
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.gates import check_scope, check_tests_weakened
from pm_agent.gates.integrity import ASSERTION, SKIP_MARKER, in_scope
from pm_agent.plan.models import ExpectedFiles, Task


def _task(**fields: Any) -> Task:
    return Task(id="1", title="Calc", **fields)


# ---------------------------------------------------------------- scope: entries that allow, files they refuse


def test_ownership_directory_refuses_a_sibling_sharing_its_prefix(work: Any) -> None:
    work.write("pkg/calc/core.py", "x\n")
    work.write("pkg/calculator.py", "x\n")  # starts with "pkg/calc" but is not under pkg/calc/
    work.write("pkg/other/util.py", "x\n")
    result = check_scope(_task(ownership="pkg/calc/"), work.path, work.base)
    assert not result.passed
    assert result.details["outside"] == ["pkg/calculator.py", "pkg/other/util.py"]
    assert result.details["allowed"] == ["pkg/calc/"]
    assert "2 file(s) changed outside the task's scope:" in result.evidence
    assert "  pkg/calculator.py (A)" in result.evidence
    assert "  allowed: pkg/calc/" in result.evidence


def test_ownership_without_slash_counts_only_when_it_is_a_directory(make_work: Any) -> None:
    work = make_work({"pkg/__init__.py": ""})
    work.write("pkg/core.py", "x\n")
    work.write("pkgs.py", "x\n")
    result = check_scope(_task(ownership="pkg"), work.path, work.base)
    assert not result.passed
    assert result.details["allowed"] == ["pkg/"]
    assert result.details["outside"] == ["pkgs.py"]

    # a word that names no directory (the plan's "Ownership: calculator") sets no scope at all
    result = check_scope(_task(ownership="calculator"), work.path, work.base)
    assert result.passed
    assert result.details["checked"] is False


def test_expected_directory_without_slash_allows_inside_and_refuses_beside(make_work: Any) -> None:
    work = make_work({"docs/guide/index.md": "# guide\n"})
    work.write("docs/guide/intro.md", "x\n")
    work.write("docs/guidebook.md", "x\n")
    result = check_scope(_task(expected_files=ExpectedFiles(modify=["docs/guide"])), work.path, work.base)
    assert not result.passed
    assert result.details["outside"] == ["docs/guidebook.md"]


def test_exact_expected_file_refuses_a_file_it_is_a_prefix_of(work: Any) -> None:
    work.write("calc.py", "changed\n")
    work.write("calc.py.bak", "x\n")
    work.write("calc/extra.py", "x\n")
    result = check_scope(_task(expected_files=ExpectedFiles(modify=["calc.py"])), work.path, work.base)
    assert not result.passed
    assert result.details["outside"] == ["calc.py.bak", "calc/extra.py"]
    assert result.details["untouched"] == []


@pytest.mark.parametrize(
    ("entry", "inside", "outside"),
    [
        ("docs/guide/*.md", "docs/guide/intro.md", "docs/other/intro.md"),
        ("docs/guide/*.md", "docs/guide/intro.md", "docs/guide/intro.MD"),  # case-sensitive, like git
        ("docs/ch?.md", "docs/ch1.md", "docs/ch10.md"),
        ("docs/ch[12].md", "docs/ch2.md", "docs/ch3.md"),
    ],
)
def test_glob_entry_allows_its_matches_and_refuses_the_rest(work: Any, entry: str, inside: str, outside: str) -> None:
    work.write(inside, "x\n")
    work.write(outside, "x\n")
    result = check_scope(_task(expected_files=ExpectedFiles(create=[entry])), work.path, work.base)
    assert not result.passed
    assert result.details["outside"] == [outside]
    assert result.details["untouched"] == []


def test_expected_file_with_a_line_range_and_tests_to_add_are_in_scope(work: Any) -> None:
    work.write("calc.py", "changed\n")
    work.write("tests/test_new.py", "def test_x():\n    assert 1\n")
    work.write("notes.txt", "x\n")
    task = _task(expected_files=ExpectedFiles(modify=["./calc.py:10-20"]), tests_to_add=["tests/test_new.py"])
    result = check_scope(task, work.path, work.base)
    assert result.details["allowed"] == ["calc.py", "tests/test_new.py"]
    assert result.details["outside"] == ["notes.txt"]


def test_blank_entries_define_no_scope_and_extra_allowed_alone_does_not_either(work: Any) -> None:
    work.write("anything.py", "x\n")
    blank = _task(expected_files=ExpectedFiles(modify=["  "]), ownership="  ")
    result = check_scope(blank, work.path, work.base, extra_allowed=["docs/reviews/"])
    assert result.passed
    assert result.details["checked"] is False
    assert result.details["changed"] == ["anything.py"]


def test_extra_allowed_widens_a_scope_the_contract_defines(work: Any) -> None:
    work.write("calc.py", "changed\n")
    work.write("notes/review.md", "x\n")
    task = _task(expected_files=ExpectedFiles(modify=["calc.py"]))
    assert not check_scope(task, work.path, work.base).passed
    result = check_scope(task, work.path, work.base, extra_allowed=["notes/"])
    assert result.passed, result.evidence
    assert result.evidence == "all 2 changed file(s) are within scope"


def test_untouched_expected_files_are_named_in_the_evidence(work: Any) -> None:
    work.write("calc.py", "changed\n")
    task = _task(expected_files=ExpectedFiles(modify=["calc.py", "util.py"], create=["new.py"], delete=["old.py"]))
    result = check_scope(task, work.path, work.base)
    assert result.passed
    assert result.details["untouched"] == ["new.py", "util.py", "old.py"]
    assert result.evidence.endswith("  (expected but untouched: new.py, util.py, old.py)")


def test_in_scope_directory_entries() -> None:
    assert in_scope("src/a.py", ["src/"])
    assert not in_scope("src", ["src/"])  # the directory entry is not a file of that name
    assert not in_scope("srcs/a.py", ["src/"])
    assert not in_scope("src/a.py", ["src"])  # without the worktree it cannot know "src" is a directory
    assert in_scope("src", ["src"])


# ---------------------------------------------------------------- tests weakened: scan order


def test_assertions_removed_in_the_same_change_as_a_source_file_are_caught(make_work: Any) -> None:
    # calc.py sorts before tests/: the scan must go on past a source file with removed lines
    work = make_work(
        {"calc.py": "def add(a, b):\n    return a + b\n", "tests/test_calc.py": "def test_add():\n    assert 1\n"}
    )
    work.write("calc.py", "def add(a, b):\n    return a - b\n")
    work.write("tests/test_calc.py", "def test_add():\n    pass\n")
    result = check_tests_weakened(_task(), work.path, work.base)
    assert not result.passed
    assert result.details["removed_asserts"] == {"tests/test_calc.py": {"removed": 1, "added": 0}}
    assert result.evidence == "assertions removed: tests/test_calc.py (-1 +0 assert lines)"


def test_assertions_removed_after_a_deleted_test_file_are_caught(make_work: Any) -> None:
    work = make_work(
        {
            "tests/test_a.py": "def test_a():\n    assert 1\n",
            "tests/test_b.py": "def test_b():\n    assert 2\n    assert 3\n",
        }
    )
    work.delete("tests/test_a.py")
    work.write("tests/test_b.py", "def test_b():\n    assert 2\n")
    result = check_tests_weakened(_task(), work.path, work.base)
    assert result.details["deleted"] == ["tests/test_a.py"]
    assert result.details["removed_asserts"] == {"tests/test_b.py": {"removed": 1, "added": 0}}
    assert result.evidence.splitlines() == [
        "test file deleted: tests/test_a.py",
        "assertions removed: tests/test_b.py (-1 +0 assert lines)",
    ]


def test_removed_assertions_outside_test_files_do_not_count(make_work: Any) -> None:
    work = make_work({"calc.py": "def add(a, b):\n    assert a\n    return a + b\n"})
    work.write("calc.py", "def add(a, b):\n    return a + b\n")
    result = check_tests_weakened(_task(), work.path, work.base)
    assert result.passed
    assert result.evidence == "no test deleted, skipped or stripped of assertions"


def test_as_many_assertions_added_as_removed_is_not_weakening(make_work: Any) -> None:
    work = make_work({"tests/test_a.py": "def test_a():\n    assert f(1) == 1\n"})
    work.write("tests/test_a.py", "def test_a():\n    assert f(1) == 2\n")
    result = check_tests_weakened(_task(), work.path, work.base)
    assert result.passed
    assert result.details["removed_asserts"] == {}


def test_skip_marker_in_a_source_file_is_not_a_test_change(work: Any) -> None:
    work.write("calc.py", "import pytest\nSKIP = pytest.mark.skip\n")
    assert check_tests_weakened(_task(), work.path, work.base).passed


def test_a_marker_line_is_quoted_with_its_place_and_cut_to_160_characters(work: Any) -> None:
    long_reason = "r" * 300
    work.write(
        "tests/test_calc.py",
        "import pytest\nfrom calc import add\n\n\nclass TestAdd:\n"
        f"    @pytest.mark.skip(reason='{long_reason}')\n    def test_add(self):\n        assert add(1, 2) == 3\n",
    )
    result = check_tests_weakened(_task(), work.path, work.base)
    [marker] = result.details["markers"]
    assert marker.startswith("tests/test_calc.py:6: @pytest.mark.skip(reason='rrr")
    assert len(marker) == len("tests/test_calc.py:6: ") + 160
    assert result.evidence == f"skip/xfail marker added: {marker}"


# ---------------------------------------------------------------- each alternative of the patterns

SKIPS = [
    "@pytest.mark.skip",
    "@pytest.mark.skipif(sys.platform == 'win32', reason='x')",
    "@pytest.mark.xfail(strict=False)",
    "pytestmark = pytest.mark.xfail",
    "    pytest.skip('later')",
    "    pytest.xfail ('known')",
    "@unittest.skip('later')",
    "@unittest.skipIf(True, 'x')",
    "@unittest.skipUnless(False, 'x')",
    "@unittest.expectedFailure",
    "@skip('later')",
    "@skipIf(True, 'x')",
    "@skipUnless(False, 'x')",
    "@expectedFailure",
    "        self.skipTest('not today')",
    "it.skip('adds', () => {})",
    "test.skip('adds', () => {})",
    "describe.skip('calc', () => {})",
    "context.skip('calc', () => {})",
    "it.only('adds', () => {})",
    "test.todo('adds')",
    "xit('adds', () => {})",
    "xtest('adds', () => {})",
    "xdescribe('calc', () => {})",
    "    @Ignore",
    '    @Ignore("flaky on CI")',
    "    @Disabled",
    '    @Disabled("until the API is back")',
    "    @DisabledOnOs(OS.LINUX)",
    "    @Test(enabled = false)",
    '    @Test(groups = "slow", enabled=false)',
    '\tt.Skip("later")',
    '\tt.Skipf("needs %s", db)',
    "\tsub.SkipNow()",
    "#[ignore]",
    '#[ignore = "slow"]',
    '        $this->markTestSkipped("needs a database");',
    "        self::markTestIncomplete();",
    '  xit "adds" do',
    "  xdescribe Calc do",
    "  xcontext('empty') do",
    '    skip "not on CI"',
    "    skip",
    "    pending('waits for the API')",
]
NOT_SKIPS = [
    "@pytest.mark.skipping_helper",
    "pytest.skip_if_missing('x')",
    "@unittest.skipper",
    "@skipper",
    "submit.skip('x')",
    "unit.only('x')",
    "exit(1)",
    "fixit('x')",
    "xitem = 1",
    "self.skipTests",
    "@IgnoreExtraProperties",
    "    @Test(enabled = true)",
    "\tt.Skipper()",
    "#[ignored_attr]",
    "// t.skip later",
    "  exit_code = 1",
    "    skip_reason = nil",
    "    pending_orders.each do |o|",
    "  xiter.next",
]


@pytest.mark.parametrize("line", SKIPS)
def test_each_skip_marker_form_is_recognised(line: str) -> None:
    assert SKIP_MARKER.search(line) is not None


@pytest.mark.parametrize("line", NOT_SKIPS)
def test_words_that_only_resemble_a_skip_marker_are_not(line: str) -> None:
    assert SKIP_MARKER.search(line) is None


ASSERTS = [
    "assert total == 3",
    "    assert(total)",
    "        self.assertEqual(total, 3)",
    "self.assertTrue (ok)",
    "self.fail('unreachable')",
    "expect(total).toBe(3)",
    "  expect (total).toBe(3)",
    "assert_frame_equal(left, right)",
    "        assertEquals(3, Add.add(1, 2));",
    "        Assertions.assertThrows(IllegalStateException.class, () -> cart.pay());",
    "        assertThat(total).isEqualTo(3);",
    "    Assert.assertTrue(ok)",
    "\tassert.Equal(t, 3, Add(1, 2))",
    "\trequire.NoError(t, err)",
    '\t\tt.Errorf("got %d", got)',
    "\t\tt.Fatal(err)",
    "    assert!(ok);",
    "    assert_eq!(add(1, 2), 3);",
    "    debug_assert_ne!(a, b);",
    "        $this->assertSame(3, Calc::add(1, 2));",
    "        self::assertTrue($ok);",
    "    assert_equal 3, Calc.add(1, 2)",
    "    refute_nil cart.total",
]
NOT_ASSERTS = [
    "assertion = check()",
    "x = 1  # assert later",
    "self.failureException = E",
    "expected(total)",
    "print('assert total')",
    "self.assert_",
    "    assertion.run()",
    '    t.Log("assert later")',
    "    asserted!(x)",
    "    assert_count = 3",
    "    $this->assertions = [];",
]


@pytest.mark.parametrize("line", ASSERTS)
def test_each_assertion_form_is_recognised(line: str) -> None:
    assert ASSERTION.match(line) is not None


@pytest.mark.parametrize("line", NOT_ASSERTS)
def test_lines_that_only_mention_assert_are_not_assertions(line: str) -> None:
    assert ASSERTION.match(line) is None


def test_every_marker_form_added_to_tests_is_reported_through_the_gate(make_work: Any) -> None:
    work = make_work({"tests/test_a.py": "", "web/calc.test.js": ""})
    work.write("tests/test_a.py", "\n".join(s for s in SKIPS if not s.startswith(("it", "test.", "desc", "cont", "x"))))
    work.write("web/calc.test.js", "\n".join(s for s in SKIPS if s.startswith(("it", "test.", "desc", "cont", "x"))))
    result = check_tests_weakened(_task(), work.path, work.base)
    assert len(result.details["markers"]) == len(SKIPS)


def test_every_assertion_form_removed_from_a_test_is_counted(make_work: Any) -> None:
    work = make_work({"tests/test_a.py": "def test_a():\n" + "\n".join(f"    {a.strip()}" for a in ASSERTS) + "\n"})
    work.write("tests/test_a.py", "def test_a():\n    pass\n")
    result = check_tests_weakened(_task(), work.path, work.base)
    assert result.details["removed_asserts"] == {"tests/test_a.py": {"removed": len(ASSERTS), "added": 0}}
