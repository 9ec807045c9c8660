"""One switch for the plan reader's shortcuts, so that tests can read every plan both ways and compare.

With `ENABLED` False every section goes to markdown-it and no shortcut of the readers is taken: what
the shortcuts give must be exactly what this slow path gives (tests/plan/test_plan_fastpath.py).
"""

from __future__ import annotations

ENABLED = True
