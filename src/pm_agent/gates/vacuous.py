"""Vacuous tests, read from the syntax tree: a test the change adds or changes must be able to fail.

Each assertion of a test function gets a strength:

- TAUTOLOGY: cannot fail (`assert True`, `assert 1 == 1`, `assert x == x`, `assert len(x) >= 0`,
  `self.assertTrue(True)`, an assertion inside `try:` whose handler swallows AssertionError);
- WEAK: checks almost nothing (`is not None`, `!= None`, `assertIsNotNone`);
- VAGUE: truthiness or type of a value (`assert result`, `assert isinstance(r, int)`, `assertTrue(x)`):
  it may be a real check (a predicate), pm-agent cannot tell;
- ORDER: an inequality (`<`, `!=`, `not in`); STRONG: equality, membership, `pytest.raises`,
  `self.assertEqual`, a predicate call (`is_valid(x)`), a helper named assert*/check*/verify*/expect*.

A test with no assertion, with only tautologies, or with nothing stronger than WEAK fails the gate; so
does a test whose old version had an ORDER or STRONG assertion and whose new version has nothing
stronger than VAGUE (an assertion replaced by a weaker one). A test with nothing stronger than VAGUE,
or whose equality checks turned into inequalities, is suspicious: pm-agent cannot tell, and a reviewer
agent is asked to look at the lines named.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from pm_agent.gates.common import is_ignored_path, is_test_path


class Strength(IntEnum):
    """How much an assertion checks."""

    TAUTOLOGY = 0
    WEAK = 1
    VAGUE = 2
    ORDER = 3
    STRONG = 4


_PREDICATE = re.compile(
    r"^(?:is|has|have|can|should|must|does|contains|exists|matches|equals?|are|was|were)(?:_|[A-Z0-9]|$)"
)
_PREDICATES = frozenset(
    {"all", "any", "callable", "hasattr", "issubclass", "startswith", "endswith", "search", "fullmatch", "isclose"}
)
_HELPER_PREFIXES = ("assert", "check", "verify", "expect")
_CONTEXT_CHECKS = frozenset({"raises", "warns", "deprecated_call", "assertRaises", "assertRaisesRegex", "assertWarns"})
_CONTEXT_CHECKS |= frozenset({"assertWarnsRegex", "assertLogs", "assertNoLogs", "raises_regex"})
_WEAK_UNITTEST = {"assertIsNotNone": Strength.WEAK, "assertIsInstance": Strength.VAGUE}
_SWALLOWERS = frozenset({"AssertionError", "Exception", "BaseException"})


def _name(node: ast.AST) -> str:
    """The last name of a call target (`pytest.raises` -> raises, `self.assertEqual` -> assertEqual)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


_NO_VALUE = object()
_OPS: dict[type[ast.cmpop], Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.eq,  # literals: identity of equal constants is what `is` means to a reader
    ast.IsNot: operator.ne,
    ast.In: lambda a, b: operator.contains(b, a),
    ast.NotIn: lambda a, b: not operator.contains(b, a),
}


def _literal(node: ast.AST) -> object:
    """The value of a literal expression (`3`, `"a"`, `(1, 2)`), `_NO_VALUE` when it is not one."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_VALUE


def _constant_truth(node: ast.AST) -> bool | None:
    """The truth of an expression made only of literals, comparisons of literals included (None: not one)."""
    if isinstance(node, ast.Compare):
        values = [_literal(n) for n in (node.left, *node.comparators)]
        if any(v is _NO_VALUE for v in values):
            return None
        try:
            return all(bool(_OPS[type(op)](a, b)) for op, a, b in zip(node.ops, values, values[1:], strict=False))
        except (TypeError, ValueError):
            return None
    value = _literal(node)
    return None if value is _NO_VALUE else bool(value)


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _compare(node: ast.Compare) -> Strength:
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if len(node.ops) == 1 and _same(left, right) and isinstance(op, ast.Eq | ast.Is | ast.LtE | ast.GtE):
        return Strength.TAUTOLOGY
    if isinstance(op, ast.IsNot | ast.NotEq) and _is_none(right):
        return Strength.WEAK
    if _name(left) == "len" and isinstance(op, ast.GtE) and isinstance(right, ast.Constant) and right.value == 0:
        return Strength.TAUTOLOGY
    if all(isinstance(o, ast.Eq | ast.Is | ast.In) for o in node.ops):
        return Strength.STRONG
    return Strength.ORDER


def _truth_test(node: ast.expr) -> Strength:
    """The strength of `assert <node>`."""
    truth = _constant_truth(node)
    if truth is not None:
        return Strength.TAUTOLOGY if truth else Strength.STRONG  # `assert False` always fails: not vacuous
    if isinstance(node, ast.Compare):
        return _compare(node)
    if isinstance(node, ast.BoolOp):
        parts = [_truth_test(v) for v in node.values]
        if isinstance(node.op, ast.Or):
            return Strength.TAUTOLOGY if Strength.TAUTOLOGY in parts else min(parts)
        return max(parts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Strength.STRONG if isinstance(node.operand, ast.Call) and _is_predicate(node.operand) else Strength.VAGUE
    if isinstance(node, ast.Call):
        if _name(node) == "isinstance":
            return Strength.VAGUE
        return Strength.STRONG if _is_predicate(node) else Strength.VAGUE
    return Strength.VAGUE


def _is_predicate(call: ast.Call) -> bool:
    name = _name(call)
    return name in _PREDICATES or bool(_PREDICATE.match(name)) or name.startswith(_HELPER_PREFIXES)


def _unittest_call(call: ast.Call, name: str) -> Strength:
    args = call.args
    if name in ("assertTrue", "assert_") and args:
        return _truth_test(args[0])
    if name == "assertFalse" and args:
        truth = _constant_truth(args[0])
        return Strength.TAUTOLOGY if truth is False else Strength.VAGUE if truth is None else Strength.STRONG
    if name in ("assertEqual", "assertEquals", "assertIs", "assertCountEqual") and len(args) >= 2:
        if _same(args[0], args[1]):
            return Strength.TAUTOLOGY
        first, second = _literal(args[0]), _literal(args[1])
        if first is not _NO_VALUE and second is not _NO_VALUE:
            return Strength.TAUTOLOGY if first == second else Strength.STRONG
    if name == "assertIsNotNone" and args and _constant_truth(args[0]) is not None:
        return Strength.TAUTOLOGY
    return _WEAK_UNITTEST.get(name, Strength.STRONG)


def call_strength(call: ast.Call, helpers: frozenset[str]) -> Strength | None:
    """The strength of a call used as a statement, None when it is not an assertion."""
    name = _name(call)
    if name.startswith("assert") and isinstance(call.func, ast.Attribute) and _name(call.func.value) == "self":
        return _unittest_call(call, name)
    if name in ("fail", "raises", "warns") or name in helpers:
        return Strength.STRONG
    if any(link.startswith(_HELPER_PREFIXES) for link in _chain(call)):  # assert_that(x).is_equal_to(5)
        return Strength.STRONG
    return None


def _chain(call: ast.Call) -> Iterator[str]:
    """The names along a fluent call chain, outermost first: `expect(x).to.equal(5)` -> equal, to, expect."""
    node: ast.AST = call
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            yield node.attr
            node = node.value
        elif isinstance(node, ast.Name):
            yield node.id
            return
        else:
            return


@dataclass
class Assertion:
    """One assertion of a test: its line and strength."""

    line: int
    strength: Strength


def _swallows(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = [_name(n) for n in (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])]
    body = list(ast.walk(ast.Module(body=handler.body, type_ignores=[])))
    reraises = any(isinstance(n, ast.Raise) or (isinstance(n, ast.Call) and _name(n) == "fail") for n in body)
    return bool(_SWALLOWERS.intersection(names)) and not reraises


def assertions(func: ast.AST, helpers: frozenset[str] = frozenset()) -> list[Assertion]:
    """Every assertion in a test function, in order, with its strength."""
    found: list[Assertion] = []
    _collect(func, helpers, False, found)
    return sorted(found, key=lambda a: a.line)


def _collect(node: ast.AST, helpers: frozenset[str], swallowed: bool, found: list[Assertion]) -> None:
    if isinstance(node, ast.Try):
        inner = swallowed or any(_swallows(h) for h in node.handlers)
        for statement in node.body:
            _collect(statement, helpers, inner, found)
        for other in [*node.handlers, *node.orelse, *node.finalbody]:
            _collect(other, helpers, swallowed, found)
        return
    strength: Strength | None = None
    if isinstance(node, ast.Assert):
        strength = _truth_test(node.test)
    elif isinstance(node, ast.Raise) and node.exc is not None and _name(node.exc) == "AssertionError":
        strength = Strength.STRONG
    elif isinstance(node, ast.With | ast.AsyncWith):
        if any(_name(item.context_expr) in _CONTEXT_CHECKS for item in node.items):
            strength = Strength.STRONG
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await):
        call = node.value.value if isinstance(node.value, ast.Await) else node.value
        strength = call_strength(call, helpers) if isinstance(call, ast.Call) else None
    if strength is not None:
        line = getattr(node, "lineno", 0)
        found.append(Assertion(line, Strength.TAUTOLOGY if swallowed else strength))
    for child in ast.iter_child_nodes(node):
        _collect(child, helpers, swallowed, found)


def iter_tests(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of each test: module-level `test*` functions and `test*` methods of classes."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test"):
                    yield f"{node.name}.{item.name}", item


def helper_names(tree: ast.Module) -> frozenset[str]:
    """Functions of the module, not tests, that contain an assertion: calling one is an assertion."""
    names = set()
    for node in ast.walk(tree):
        is_helper = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("test")
        if is_helper and any(isinstance(n, ast.Assert) for n in ast.walk(node)):
            names.add(getattr(node, "name", ""))
    return frozenset(names)


@dataclass
class TestVerdict:
    """What is wrong with one test: `failing` problems fail the gate, `suspicious` ones go to a reviewer."""

    __test__ = False  # not a pytest test class

    failing: list[str] = field(default_factory=list)
    suspicious: list[str] = field(default_factory=list)


def _where(path: str, lines: list[str], number: int) -> str:
    text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return f"{path}:{number}: `{text[:120]}`"


def judge_test(path: str, name: str, new: list[Assertion], old: list[Assertion] | None, src: list[str]) -> TestVerdict:
    """Judge one test from its assertions now (`new`) and in the base version (`old`, None: a new test)."""
    verdict = TestVerdict()
    best = max((a.strength for a in new), default=None)
    first = new[0].line if new else 0
    if best is None:
        verdict.failing.append(f"{path}: {name} has no assertion: it passes whatever the code does, unless it raises")
    elif best is Strength.TAUTOLOGY:
        verdict.failing += [f"cannot fail: {_where(path, src, a.line)} ({name})" for a in new]
    elif best is Strength.WEAK:
        verdict.failing += [f"checks almost nothing: {_where(path, src, a.line)} ({name})" for a in new]
    old_best = max((a.strength for a in old or []), default=None)
    if verdict.failing or best is None:
        pass
    elif old_best is not None and old_best >= Strength.ORDER and best <= Strength.VAGUE:
        weaker = [_where(path, src, a.line) for a in new if a.strength <= Strength.VAGUE]
        verdict.failing.append(f"assertion replaced by a weaker one in {name}: " + "; ".join(weaker))
    elif best is Strength.VAGUE:
        verdict.suspicious += [f"only truthiness/type checked: {_where(path, src, a.line)} ({name})" for a in new]
    elif old_best is Strength.STRONG and best is Strength.ORDER:
        verdict.suspicious.append(f"equality replaced by an inequality in {name}: {_where(path, src, first)}")
    return verdict


def _parse(text: str | None) -> ast.Module | None:
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


@dataclass
class VacuousReport:
    """The vacuous-test findings of a change."""

    failing: list[str] = field(default_factory=list)
    suspicious: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # path::test of every test judged
    skipped: list[str] = field(default_factory=list)  # files that could not be read as Python


def judge_file(path: str, old_text: str | None, new_text: str, report: VacuousReport) -> None:
    """Judge each test of a Python test file that the change adds or changes."""
    tree = _parse(new_text)
    if tree is None:
        report.skipped.append(f"{path} (not valid Python)")
        return
    old_tree = _parse(old_text)
    old_tests = dict(iter_tests(old_tree)) if old_tree is not None else {}
    helpers = helper_names(tree)
    old_helpers = helper_names(old_tree) if old_tree is not None else frozenset()
    src = new_text.splitlines()
    for name, func in iter_tests(tree):
        before = old_tests.get(name)
        if before is not None and _same(before, func):
            continue
        old = assertions(before, old_helpers) if before is not None else None
        verdict = judge_test(path, name, assertions(func, helpers), old, src)
        report.checked.append(f"{path}::{name}")
        report.failing += verdict.failing
        report.suspicious += verdict.suspicious


def is_python_test(path: str) -> bool:
    """A Python test module (conftest.py holds fixtures and hooks, not tests)."""
    python = path.endswith(".py") and not path.endswith("conftest.py")
    return python and is_test_path(path) and not is_ignored_path(path)


__all__ = [
    "Assertion",
    "Strength",
    "TestVerdict",
    "VacuousReport",
    "assertions",
    "call_strength",
    "helper_names",
    "is_python_test",
    "iter_tests",
    "judge_file",
    "judge_test",
]
