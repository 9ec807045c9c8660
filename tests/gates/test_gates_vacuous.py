"""Vacuous tests, judged from the syntax tree: a test the change adds or changes must be able to fail."""

from __future__ import annotations

import ast
import textwrap

import pytest

from pm_agent.gates import AgentReport, GateId, gate_tests_weakened
from pm_agent.gates.vacuous import Strength, VacuousReport, assertions, judge_file
from pm_agent.plan.models import Task

from .conftest import MakeWork

TASK = Task(id="1", title="Calc")
CALC = "def add(a, b):\n    return a + b\n"
GOOD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _strengths(body: str) -> list[Strength]:
    source = "def test_x(self=None):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    func = ast.parse(source).body[0]
    return [a.strength for a in assertions(func)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("assert True", Strength.TAUTOLOGY),
        ("assert 1", Strength.TAUTOLOGY),
        ("assert 1 == 1", Strength.TAUTOLOGY),
        ("assert 'a' in 'abc'", Strength.TAUTOLOGY),
        ("assert add(2, 3) == add(2, 3)", Strength.TAUTOLOGY),
        ("assert x is x", Strength.TAUTOLOGY),
        ("assert len(items) >= 0", Strength.TAUTOLOGY),
        ("assert add(1, 2) == 3 or True", Strength.TAUTOLOGY),
        ("self.assertTrue(True)", Strength.TAUTOLOGY),
        ("self.assertEqual(result, result)", Strength.TAUTOLOGY),
        ("self.assertEqual(2, 2)", Strength.TAUTOLOGY),
        ("try:\n    assert add(2, 3) == 5\nexcept AssertionError:\n    pass", Strength.TAUTOLOGY),
        ("try:\n    assert add(2, 3) == 5\nexcept Exception:\n    print('oops')", Strength.TAUTOLOGY),
        ("assert add(2, 3) is not None", Strength.WEAK),
        ("assert add(2, 3) != None", Strength.WEAK),
        ("self.assertIsNotNone(add(2, 3))", Strength.WEAK),
        ("assert add(2, 3)", Strength.VAGUE),
        ("assert result", Strength.VAGUE),
        ("assert not errors", Strength.VAGUE),
        ("assert isinstance(add(2, 3), int)", Strength.VAGUE),
        ("self.assertTrue(result)", Strength.VAGUE),
        ("self.assertIsInstance(result, int)", Strength.VAGUE),
        ("assert add(2, 3) > 0", Strength.ORDER),
        ("assert add(2, 3) != 4", Strength.ORDER),
        ("assert add(2, 3) == 5", Strength.STRONG),
        ("assert 'x' in names", Strength.STRONG),
        ("assert 1 == 2", Strength.STRONG),  # always fails: not vacuous
        ("assert False", Strength.STRONG),
        ("assert is_prime(7)", Strength.STRONG),
        ("assert path.exists()", Strength.STRONG),
        ("assert not is_prime(8)", Strength.STRONG),
        ("assert text.startswith('a')", Strength.STRONG),
        ("self.assertEqual(add(2, 3), 5)", Strength.STRONG),
        ("self.assertTrue(add(2, 3) == 5)", Strength.STRONG),
        ("self.fail('unreachable')", Strength.STRONG),
        ("pytest.fail('unreachable')", Strength.STRONG),
        ("pytest.raises(ValueError, div, 1, 0)", Strength.STRONG),
        ("with pytest.raises(ValueError):\n    div(1, 0)", Strength.STRONG),
        ("with self.assertRaises(ValueError):\n    div(1, 0)", Strength.STRONG),
        ("mock.assert_called_once_with(1)", Strength.STRONG),
        ("check_output(['true'])", Strength.STRONG),
        ("raise AssertionError('bad')", Strength.STRONG),
        ("assert_that(add(2, 3)).is_equal_to(5)", Strength.STRONG),
        ("expect(add(2, 3)).to.equal(5)", Strength.STRONG),
        ("try:\n    assert add(2, 3) == 5\nexcept ValueError:\n    pass", Strength.STRONG),
        ("try:\n    assert add(2, 3) == 5\nexcept AssertionError:\n    raise", Strength.STRONG),
    ],
)
def test_assertion_strength(body: str, expected: Strength) -> None:
    assert _strengths(body) == [expected]


def test_calls_that_are_not_assertions_are_not_counted() -> None:
    assert _strengths("result = add(2, 3)\nprint(result)\nvalidate(result)") == []


def _judge(old: str | None, new: str) -> VacuousReport:
    report = VacuousReport()
    judge_file("tests/test_calc.py", old, new, report)
    return report


def test_a_test_without_assertion_fails() -> None:
    report = _judge(None, "from calc import add\n\n\ndef test_add():\n    add(2, 3)\n")
    assert report.failing == [
        "tests/test_calc.py: test_add has no assertion: it passes whatever the code does, unless it raises"
    ]


def test_tautologies_fail_with_each_line() -> None:
    report = _judge(None, "def test_add():\n    assert True\n    assert 1 == 1\n")
    assert report.failing == [
        "cannot fail: tests/test_calc.py:2: `assert True` (test_add)",
        "cannot fail: tests/test_calc.py:3: `assert 1 == 1` (test_add)",
    ]


def test_only_is_not_none_fails() -> None:
    report = _judge(None, "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) is not None\n")
    assert report.failing == ["checks almost nothing: tests/test_calc.py:5: `assert add(2, 3) is not None` (test_add)"]


def test_a_strong_assertion_next_to_a_weak_one_passes() -> None:
    report = _judge(None, GOOD + "    assert add(0, 0) is not None\n")
    assert report.failing == []
    assert report.suspicious == []
    assert report.checked == ["tests/test_calc.py::test_add"]


def test_assertion_replaced_by_a_weaker_one_fails() -> None:
    weaker = GOOD.replace("assert add(2, 3) == 5", "assert add(2, 3)")
    report = _judge(GOOD, weaker)
    assert report.failing == [
        "assertion replaced by a weaker one in test_add: tests/test_calc.py:5: `assert add(2, 3)`"
    ]


def test_truthiness_only_in_a_new_test_is_suspicious_not_failing() -> None:
    report = _judge(None, "from calc import add\n\n\ndef test_add():\n    assert add(2, 3)\n")
    assert report.failing == []
    assert report.suspicious == ["only truthiness/type checked: tests/test_calc.py:5: `assert add(2, 3)` (test_add)"]


def test_equality_turned_into_an_inequality_is_suspicious() -> None:
    report = _judge(GOOD, GOOD.replace("== 5", "> 0"))
    assert report.failing == []
    assert report.suspicious == [
        "equality replaced by an inequality in test_add: tests/test_calc.py:5: `assert add(2, 3) > 0`"
    ]


def test_unchanged_tests_are_not_judged() -> None:
    old = "def test_old():\n    assert True\n\n\n" + GOOD
    report = _judge(old, old + "\n\ndef test_more():\n    assert add(1, 1) == 2\n")
    assert report.checked == ["tests/test_calc.py::test_more"], "a pre-existing tautology is not this task's doing"
    assert report.failing == []


def test_methods_helpers_and_async_tests() -> None:
    source = textwrap.dedent(
        """\
        import unittest

        def check_sum(a, b, total):
            assert a + b == total

        class TestCalc(unittest.TestCase):
            def test_equal(self):
                self.assertEqual(1 + 1, 2)

            def test_helper(self):
                check_sum(1, 2, 3)

            def test_nothing(self):
                self.assertIsNotNone(object())

        async def test_async():
            assert await compute() == 4
        """
    )
    report = _judge(None, source)
    assert report.checked == [
        "tests/test_calc.py::TestCalc.test_equal",
        "tests/test_calc.py::TestCalc.test_helper",
        "tests/test_calc.py::TestCalc.test_nothing",
        "tests/test_calc.py::test_async",
    ]
    assert report.failing == [
        "checks almost nothing: tests/test_calc.py:14: `self.assertIsNotNone(object())` (TestCalc.test_nothing)"
    ]


def test_invalid_python_is_skipped_not_crashed() -> None:
    report = _judge(None, "def test_x(:\n")
    assert report.skipped == ["tests/test_calc.py (not valid Python)"]


# ---------------------------------------------------------------- through the gate, on a real repository


def test_gate_fails_on_a_weakened_assertion_in_a_real_change(make_work: MakeWork) -> None:
    work = make_work({"calc.py": CALC, "tests/test_calc.py": GOOD})
    work.write("tests/test_calc.py", GOOD.replace("== 5", "is not None"))
    result = gate_tests_weakened(TASK, work.path, work.base, AgentReport())
    assert result.gate == GateId.TESTS_WEAKENED
    assert not result.passed
    assert (
        "vacuous test: checks almost nothing: tests/test_calc.py:5: `assert add(2, 3) is not None`" in result.evidence
    )
    assert result.details["vacuous"] == [
        "checks almost nothing: tests/test_calc.py:5: `assert add(2, 3) is not None` (test_add)"
    ]


def test_gate_passes_with_the_suspicious_lines_for_a_reviewer(make_work: MakeWork) -> None:
    work = make_work({"calc.py": CALC, "tests/test_calc.py": GOOD})
    work.write("tests/test_more.py", "from calc import add\n\n\ndef test_positive():\n    assert add(2, 3)\n")
    result = gate_tests_weakened(TASK, work.path, work.base, AgentReport())
    assert result.passed, result.evidence
    assert result.details["suspicious"] == [
        "only truthiness/type checked: tests/test_more.py:5: `assert add(2, 3)` (test_positive)"
    ]
    assert "pm-agent cannot tell whether these tests can fail (a reviewer will look):" in result.evidence


def test_gate_passes_honest_new_tests(make_work: MakeWork) -> None:
    work = make_work({"calc.py": CALC, "tests/test_calc.py": GOOD})
    work.write("tests/test_calc.py", GOOD + "\n\ndef test_zero():\n    assert add(0, 0) == 0\n")
    result = gate_tests_weakened(TASK, work.path, work.base, AgentReport())
    assert result.passed, result.evidence
    assert result.evidence.endswith("; 1 changed test(s) can fail")
    assert result.details["suspicious"] == []
