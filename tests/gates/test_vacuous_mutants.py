"""Vacuous-test judging where a one-token change would go unnoticed: unittest methods, handlers, messages.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

import ast

import pytest

from pm_agent.gates.vacuous import (
    Assertion,
    Strength,
    VacuousReport,
    assertions,
    helper_names,
    is_python_test,
    iter_tests,
    judge_file,
    judge_test,
)

from .test_gates_vacuous import _strengths


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # assert_ is the old alias of assertTrue: read the same way
        ("self.assert_(True)", Strength.TAUTOLOGY),
        ("self.assert_(total == 5)", Strength.STRONG),
        # assertFalse of a constant: False cannot fail, True always fails; anything else is vague
        ("self.assertFalse(False)", Strength.TAUTOLOGY),
        ("self.assertFalse(0 == 1)", Strength.TAUTOLOGY),
        ("self.assertFalse(True)", Strength.STRONG),
        ("self.assertFalse(result)", Strength.VAGUE),
        ("self.assertFalse(result, 'a message is not the value checked')", Strength.VAGUE),
        # equality methods: the same expression twice, or equal literals, cannot fail
        ("self.assertEquals(result, result)", Strength.TAUTOLOGY),
        ("self.assertIs(result, result)", Strength.TAUTOLOGY),
        ("self.assertCountEqual(items, items)", Strength.TAUTOLOGY),
        ("self.assertEqual(2, 2.0)", Strength.TAUTOLOGY),
        ("self.assertEqual(True, 1)", Strength.TAUTOLOGY),
        ("self.assertEqual(2, 3)", Strength.STRONG),
        ("self.assertEqual(total, expected)", Strength.STRONG),
        ("self.assertEqual(total, 5)", Strength.STRONG),
        ("self.assertEqual(5, total)", Strength.STRONG),
        # other unittest methods with two arguments are checks, even of the same expression
        ("self.assertNotEqual(result, result)", Strength.STRONG),
        ("self.assertIn(1, items)", Strength.STRONG),
        # assertIsNotNone of a literal cannot fail; of a value it checks almost nothing
        ("self.assertIsNotNone(5)", Strength.TAUTOLOGY),
        ("self.assertIsNotNone('x')", Strength.TAUTOLOGY),
        ("self.assertIsNotNone(result)", Strength.WEAK),
        # only methods of self are unittest assertions: another object's assert* is a helper
        ("case.assertTrue(True)", Strength.STRONG),
        ("assertTrue(True)", Strength.STRONG),
        ("pytest.warns(DeprecationWarning, old_api)", Strength.STRONG),
        ("pytest.raises(ValueError, div, 1, 0)", Strength.STRONG),
    ],
)
def test_unittest_and_call_assertions(body: str, expected: Strength) -> None:
    assert _strengths(body) == [expected]


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        ("except:\n    pass", Strength.TAUTOLOGY),  # a bare except swallows the AssertionError
        ("except (ValueError, AssertionError):\n    pass", Strength.TAUTOLOGY),
        ("except (ValueError, KeyError):\n    pass", Strength.STRONG),
        ("except BaseException:\n    pass", Strength.TAUTOLOGY),
        ("except AssertionError:\n    pytest.fail('wrong sum')", Strength.STRONG),  # fail() reports it
        ("except AssertionError:\n    self.fail('wrong sum')", Strength.STRONG),
        ("except AssertionError:\n    log('wrong sum')", Strength.TAUTOLOGY),
        ("except AssertionError as exc:\n    raise RuntimeError('wrong') from exc", Strength.STRONG),
    ],
)
def test_try_handlers_that_swallow_the_assertion(handler: str, expected: Strength) -> None:
    body = "try:\n    assert add(2, 3) == 5\n" + handler
    assert _strengths(body)[0] == expected


def test_assertions_in_handlers_else_and_finally_are_not_swallowed() -> None:
    body = (
        "try:\n    assert add(2, 3) == 5\nexcept AssertionError:\n    assert log == []\n"
        "else:\n    assert done == 1\nfinally:\n    assert closed == 1\n"
    )
    assert _strengths(body) == [Strength.TAUTOLOGY, Strength.STRONG, Strength.STRONG, Strength.STRONG]


def test_a_one_line_test_quotes_its_first_line() -> None:
    report = VacuousReport()
    judge_file("tests/test_one.py", None, "def test_x(): assert True\n", report)
    assert report.failing == ["cannot fail: tests/test_one.py:1: `def test_x(): assert True` (test_x)"]


def test_a_line_outside_the_source_is_quoted_empty() -> None:
    verdict = judge_test("t.py", "test_x", [Assertion(9, Strength.TAUTOLOGY)], None, ["def test_x():", "    pass"])
    assert verdict.failing == ["cannot fail: t.py:9: `` (test_x)"]
    verdict = judge_test("t.py", "test_x", [Assertion(0, Strength.WEAK)], None, ["def test_x():", "    pass"])
    assert verdict.failing == ["checks almost nothing: t.py:0: `` (test_x)"]


def test_a_long_line_is_quoted_up_to_120_characters() -> None:
    line = "    assert True, '" + "x" * 130 + "'"
    report = VacuousReport()
    judge_file("tests/test_long.py", None, "def test_x():\n" + line + "\n", report)
    assert report.failing == [f"cannot fail: tests/test_long.py:2: `{line.strip()[:120]}` (test_x)"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # comparisons of an expression with itself, of len() with 0, of literals
        ("assert a <= a", Strength.TAUTOLOGY),
        ("assert a >= a", Strength.TAUTOLOGY),
        ("assert a < a", Strength.ORDER),
        ("assert a == a == b", Strength.STRONG),  # a chain is not one comparison with itself
        ("assert len(x) >= 0.0", Strength.TAUTOLOGY),
        ("assert len(x) >= 1", Strength.ORDER),
        ("assert len(x) > 0", Strength.ORDER),
        ("assert size(x) >= 0", Strength.ORDER),
        ("assert None is not x", Strength.ORDER),  # only `x is not None` is the weak form
        ("assert x is y", Strength.STRONG),
        ("assert x not in y", Strength.ORDER),
        ("assert x == -1", Strength.STRONG),
        ("assert 1 < 2 < 3", Strength.TAUTOLOGY),
        ("assert 1 < 2 > 3", Strength.STRONG),
        ("assert 1 is 1", Strength.TAUTOLOGY),
        ("assert 1 is not 2", Strength.TAUTOLOGY),
        ("assert 'a' not in 'b'", Strength.TAUTOLOGY),
        ("assert 2 >= 1", Strength.TAUTOLOGY),
        ("assert 2 <= 1", Strength.STRONG),
        ("assert 1 > 2", Strength.STRONG),
        ("assert 1 != 1", Strength.STRONG),
        ("assert 'a' < 1", Strength.ORDER),  # literals that cannot be compared: not a constant
        ("assert 1 in 5", Strength.STRONG),
        ("assert (1, 2)", Strength.TAUTOLOGY),
        ("assert -1", Strength.TAUTOLOGY),
        ("assert []", Strength.STRONG),
        ("assert None", Strength.STRONG),
        # and / or
        ("assert a == 1 and b", Strength.STRONG),
        ("assert a == 1 or b", Strength.VAGUE),
        ("assert a and b is not None", Strength.VAGUE),
        ("assert b is not None or a == 1", Strength.WEAK),
        # not, calls, predicates
        ("assert not x", Strength.VAGUE),
        ("assert not is_ok(x)", Strength.STRONG),
        ("assert not foo(x)", Strength.VAGUE),
        ("assert compute(x)", Strength.VAGUE),
        ("assert (lambda: 1)()", Strength.VAGUE),
        ("assert hasValue(x)", Strength.STRONG),
        ("assert isValid(a)", Strength.STRONG),
        ("assert is2(a)", Strength.STRONG),
        ("assert is_(a)", Strength.STRONG),
        ("assert island(a)", Strength.VAGUE),
        ("assert isx(a)", Strength.VAGUE),
        *(
            (f"assert {name}(a)", Strength.STRONG)
            for name in (
                "has_x",
                "equals",
                "equal",
                "matches",
                "contains",
                "exists",
                "can_run",
                "should_x",
                "must_x",
                "does_x",
                "are_x",
                "was_x",
                "were_x",
                "have_x",
                "all",
                "any",
                "callable",
                "hasattr",
                "issubclass",
                "s.endswith",
                "re.search",
                "re.fullmatch",
                "math.isclose",
                "check_x",
                "verify_x",
                "expect_x",
                "assert_x",
            )
        ),
        # statements that are (or are not) assertions
        ("raise ValueError()", None),
        ("raise", None),
        ("async with pytest.raises(E):\n    pass", Strength.STRONG),
        ("with open(f):\n    pass", None),
        ("with pytest.warns(W), open(f):\n    pass", Strength.STRONG),
        *(
            (f"with {call}:\n    pass", Strength.STRONG)
            for call in (
                "pytest.deprecated_call()",
                "self.assertLogs()",
                "self.assertNoLogs()",
                "self.assertWarnsRegex(W, 'x')",
                "self.assertRaisesRegex(E, 'x')",
                "self.assertWarns(W)",
                "pytest.raises_regex(E)",
            )
        ),
        ("await check_x()", Strength.STRONG),
        ("await compute()", None),
        ("x = self.assertEqual(a, b)", None),
        ("items[0].check()", Strength.STRONG),
        ("obj.verify_all()", Strength.STRONG),
        ("foo(x).bar()", None),
        ("self.client.get('/')", None),
        ("(lambda: 1)()", None),
        ("fail('x')", Strength.STRONG),
        ("raises(E, f)", Strength.STRONG),
        ("helper(a)", None),
        # nesting
        ("for i in x:\n    assert i == 1", Strength.STRONG),
        ("if a:\n    assert a == 1", Strength.STRONG),
        (
            "try:\n    try:\n        assert a == 1\n    except ValueError:\n        pass\n"
            "except AssertionError:\n    pass",
            Strength.TAUTOLOGY,
        ),
    ],
)
def test_strength_of_each_form(body: str, expected: Strength | None) -> None:
    assert _strengths(body) == ([] if expected is None else [expected])


def test_a_helper_of_the_module_is_an_assertion() -> None:
    func = ast.parse("def test_x():\n    helper(a)\n    other(a)\n").body[0]
    assert [(a.line, a.strength) for a in assertions(func, frozenset({"helper"}))] == [(2, Strength.STRONG)]


SRC = ["def test_x():", "    assert a > 0", "    assert b", "    assert c == 1"]


@pytest.mark.parametrize(
    ("new", "old", "failing", "suspicious"),
    [
        (
            [Assertion(2, Strength.ORDER), Assertion(3, Strength.VAGUE)],
            [Assertion(4, Strength.STRONG)],
            [],
            ["equality replaced by an inequality in test_x: t.py:2: `assert a > 0`"],
        ),
        (
            [Assertion(2, Strength.WEAK), Assertion(3, Strength.VAGUE)],
            [Assertion(2, Strength.ORDER)],
            ["assertion replaced by a weaker one in test_x: t.py:2: `assert a > 0`; t.py:3: `assert b`"],
            [],
        ),
        (
            [Assertion(3, Strength.VAGUE)],
            [Assertion(3, Strength.VAGUE)],
            [],
            ["only truthiness/type checked: t.py:3: `assert b` (test_x)"],
        ),
        ([Assertion(3, Strength.VAGUE)], [], [], ["only truthiness/type checked: t.py:3: `assert b` (test_x)"]),
        (
            [Assertion(2, Strength.WEAK), Assertion(3, Strength.VAGUE)],
            None,
            [],
            [
                "only truthiness/type checked: t.py:2: `assert a > 0` (test_x)",
                "only truthiness/type checked: t.py:3: `assert b` (test_x)",
            ],
        ),
        ([Assertion(2, Strength.ORDER)], [Assertion(2, Strength.ORDER)], [], []),
        ([Assertion(2, Strength.ORDER), Assertion(4, Strength.STRONG)], [Assertion(4, Strength.STRONG)], [], []),
        (
            [Assertion(2, Strength.TAUTOLOGY), Assertion(3, Strength.WEAK)],
            None,
            [
                "checks almost nothing: t.py:2: `assert a > 0` (test_x)",
                "checks almost nothing: t.py:3: `assert b` (test_x)",
            ],
            [],
        ),
        (
            [Assertion(2, Strength.TAUTOLOGY)],
            [Assertion(4, Strength.STRONG)],
            ["cannot fail: t.py:2: `assert a > 0` (test_x)"],
            [],
        ),
        (
            [],
            [Assertion(4, Strength.STRONG)],
            ["t.py: test_x has no assertion: it passes whatever the code does, unless it raises"],
            [],
        ),
    ],
)
def test_judge_test(
    new: list[Assertion], old: list[Assertion] | None, failing: list[str], suspicious: list[str]
) -> None:
    verdict = judge_test("t.py", "test_x", new, old, SRC)
    assert verdict.failing == failing
    assert verdict.suspicious == suspicious


def test_the_old_version_is_read_with_its_own_helpers() -> None:
    old = "def check_sum(a, b):\n    assert a + b == 3\n\n\ndef test_s():\n    check_sum(1, 2)\n"
    report = VacuousReport()
    judge_file("tests/test_s.py", old, "def test_s():\n    total = 3\n    assert total\n", report)
    assert report.failing == ["assertion replaced by a weaker one in test_s: tests/test_s.py:3: `assert total`"]


def test_moved_tests_are_unchanged_and_an_unreadable_old_version_is_none() -> None:
    moved = VacuousReport()
    judge_file(
        "tests/test_s.py", "def test_s():\n    assert f() == 1\n", "\n\ndef test_s():\n    assert f() == 1\n", moved
    )
    assert moved.checked == []
    unreadable = VacuousReport()
    judge_file("tests/test_s.py", "def test_s(:\n", "def test_s():\n    assert f()\n", unreadable)
    assert unreadable.checked == ["tests/test_s.py::test_s"]
    assert unreadable.failing == []
    assert unreadable.suspicious == ["only truthiness/type checked: tests/test_s.py:2: `assert f()` (test_s)"]


def test_iter_tests_and_helper_names() -> None:
    tree = ast.parse(
        "class TestA:\n    async def test_m(self): pass\n    def helper(self): assert x\n    x = 1\n"
        "class B:\n    def testing_b(self): pass\n"
        "def testx(): pass\nasync def test_async(): pass\ndef other(): pass\nx = 1\n"
    )
    assert [name for name, _ in iter_tests(tree)] == ["TestA.test_m", "B.testing_b", "testx", "test_async"]
    assert helper_names(tree) == frozenset({"helper"})
    nested = ast.parse(
        "def outer():\n    def inner():\n        assert x\nasync def ahelp():\n    assert y\n"
        "def test_z():\n    assert z\ndef no(): pass\n"
    )
    assert helper_names(nested) == frozenset({"ahelp", "inner", "outer"})


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_a.py", True),
        ("test_a.py", True),
        ("a_test.py", True),
        ("tests/helpers.py", True),
        ("tests/conftest.py", False),
        ("conftest.py", False),
        ("src/a.py", False),
        ("tests/data.json", False),
        ("tests/test_a.pyc", False),
        ("docs/reviews/tests/test_a.py", False),
    ],
)
def test_is_python_test(path: str, expected: bool) -> None:
    assert is_python_test(path) is expected
