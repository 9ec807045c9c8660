"""Vacuous-test judging where a one-token change would go unnoticed: unittest methods, handlers, messages.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from pm_agent.gates.vacuous import Assertion, Strength, VacuousReport, assertions, judge_file, judge_test


def _strengths(body: str) -> list[Strength]:
    source = "def test_x(self=None):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    func = ast.parse(source).body[0]
    return [a.strength for a in assertions(func)]


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
