"""The optional `**Estimate:**` task field: lenient values, a PlanError with file:line for a bad one."""

from __future__ import annotations

import pytest

from pm_agent.errors import PlanError
from pm_agent.plan import parse_plan_text
from pm_agent.plan.fields import parse_estimate

PLAN = """\
# calc

### Task 1: Addition

**Estimate:** {value}

**Files:**
- Create: `src/add.py`

**Acceptance criteria:**
- add works

### Task 2: Negation

**Files:**
- Create: `src/neg.py`

**Acceptance criteria:**
- neg works
"""


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("2h", 2.0),
        ("3", 3.0),
        ("1.5 hours", 1.5),
        ("30 min", 0.5),
        ("1d", 8.0),
        ("`small`", 1.0),
        ("Medium", 3.0),
        ("large (the parser)", 8.0),
        ("~4h", 4.0),
        ("5 points", 5.0),
    ],
)
def test_estimates_read_leniently(value: str, size: float) -> None:
    _, tasks = parse_plan_text(PLAN.format(value=value), "plan.md")
    assert tasks[0].estimate == pytest.approx(size)
    assert tasks[1].estimate is None


@pytest.mark.parametrize("value", ["huge", "0", "-2h", "2 parsecs", "soon"])
def test_a_bad_estimate_is_a_plan_error_with_its_line(value: str) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan_text(PLAN.format(value=value), "plan.md")
    assert info.value.line == 5
    assert "unknown estimate" in str(info.value)


def test_parse_estimate_rejects_empty() -> None:
    with pytest.raises(ValueError, match="unknown estimate"):
        parse_estimate("")
