"""A plan in a form the parser once refused runs end to end with the real Claude Code CLI.

A Chinese plan whose tasks are numbered headings (`### 1.1 加法`), with Chinese labels and a dotted
dependency: pm-agent reads it, dispatches 1.1 then 1.2, gates and commits each.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pm_agent.testing.team import write

from .calc_plan import ADD, REVIEW, TEST_ADD, claimed
from .conftest import Target, git

pytestmark = pytest.mark.claude

PLAN = """\
# 计算器

**Goal:** 一个很小的计算器。

## 阶段 1：基础运算

### 1.1 加法

**文件：**

* 创建：`src/calc/add.py`
* 测试：`tests/test_add.py`

**验收标准：**

* add(a, b) 返回两数之和

### 1.2 取负

**依赖：** 1.1

**文件：**

* 创建：`src/calc/neg.py`
* 测试：`tests/test_neg.py`

**验收标准：**

* neg(a) 返回 -a
"""

NEG = '"""neg."""\n\n\ndef neg(a: int) -> int:\n    return -a\n'
TEST_NEG = "from calc.neg import neg\n\n\ndef test_neg() -> None:\n    assert neg(2) == -2\n"


def test_numbered_chinese_plan_runs(target: Callable[[str], Target]) -> None:
    t = target(PLAN)
    add = {"src/calc/add.py": ADD, "tests/test_add.py": TEST_ADD}
    neg = {"src/calc/neg.py": NEG, "tests/test_neg.py": TEST_NEG}
    t.team.scripts = {
        ("task-1.1", "developer"): [
            *(write(p, c) for p, c in add.items()),
            claimed(add, [("add(a, b) 返回两数之和", "src/calc/add.py", "return")]),
        ],
        ("task-1.2", "developer"): [
            *(write(p, c) for p, c in neg.items()),
            claimed(neg, [("neg(a) 返回 -a", "src/calc/neg.py", "return")]),
        ],
        ("*", "reviewer"): REVIEW,
    }
    rc = t.start()
    outcome = t.drive(rc)
    print("\n".join(f"{k}: {m}" for k, m, _ in t.listener.events))
    assert outcome.all_done, (outcome, t.listener.events[-10:])
    bodies = git(t.repo, "log", "--format=%B%x00", rc.run.working_branch).split("\0")
    refs = [line for body in bodies for line in body.splitlines() if line.startswith("Refs: ")]
    assert refs == ["Refs: task-1.2", "Refs: task-1.1"]  # 1.2 waits for 1.1 (依赖：1.1)
    assert git(t.repo, "show", f"{rc.run.working_branch}:src/calc/neg.py") == NEG
