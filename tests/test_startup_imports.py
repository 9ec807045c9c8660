"""What a command pays at start-up: modules and regexes a run may never use are not loaded before they are used.

Each check runs in a fresh interpreter (`sys.modules` of this one depends on the tests that ran before).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

# Imported by `pm-agent run` only when a plan, a gate command or a GitHub source calls for them.
ON_USE = (
    "pm_agent.agents.slots",
    "pm_agent.gates.findings.python_lint",
    "pm_agent.gates.findings.python_tests",
    "pm_agent.gates.findings.go_rust",
    "pm_agent.gates.findings.js_tools",
    "pm_agent.plan.numbered",
    "pm_agent.github.api",
)


def fresh(code: str) -> Any:
    """The JSON the code prints last, run in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_run_start_up_leaves_the_modules_used_on_demand_unimported() -> None:
    code = (
        "import json, sys\n"
        "import pm_agent.cli.app, pm_agent.cli.commands, pm_agent.engine.api, pm_agent.engine.final\n"
        "import pm_agent.engine.reconcile, pm_agent.engine.loop\n"
        f"print(json.dumps([m for m in {ON_USE!r} if m in sys.modules]))"
    )
    assert fresh(code) == []


def test_a_gate_command_imports_the_parsers_it_names_and_they_parse() -> None:
    code = (
        "import json, sys\n"
        "from pm_agent.gates.findings import parse_findings\n"
        "out = 'FAILED tests/test_a.py::test_one - assert 1 == 2\\n=== 1 failed, 2 passed in 0.1s ==='\n"
        "found = parse_findings('.venv/bin/python -m pytest -q', out, 1)\n"
        "others = ('pm_agent.gates.findings.go_rust', 'pm_agent.gates.findings.js_tools')\n"
        "mods = [m for m in others if m in sys.modules]\n"
        "print(json.dumps([found.parser, [f.test_id for f in found.findings], found.total, mods]))"
    )
    assert fresh(code) == ["pytest", ["tests/test_a.py::test_one"], 1, []]


def test_redacting_ordinary_text_compiles_only_the_finders_the_prefilter_keeps() -> None:
    code = (
        "import json\n"
        "from pm_agent import redaction as r\n"
        "plain = r.redact({'kind': 'run.created', 'plan': 'docs/notes.md', 'tasks': 3})\n"
        "ungated = len(r._prefilter().ungated)\n"
        "compiled = r._finder.cache_info().currsize\n"
        "secret = r.redact('token ghp_0123456789abcdefghijklmnopqrstuvwxyz')\n"
        "print(json.dumps([plain['plan'], ungated, compiled, len(r._table()[0]), secret]))"
    )
    plan, ungated, compiled, rows, secret = fresh(code)
    assert plan == "docs/notes.md"
    assert 0 < ungated == compiled < rows
    assert secret == "token [REDACTED:GitHub Token]"


PLAN = "# Plan\n\n**Goal:** notes.\n\n### Task 1: Note\n\n**Files:**\n- Create: `notes/n1.md`\n\n"
PLAN += "**Steps:**\n- write it\n"


def test_a_plan_the_fast_readers_read_whole_is_parsed_without_markdown_it() -> None:
    code = (
        "import json, sys\n"
        "import pm_agent.engine.api, pm_agent.engine.loop\n"
        "from pm_agent.plan.parser import parse_plan_text\n"
        f"plain = parse_plan_text({PLAN!r}, 'docs/plan.md')[1]\n"
        "before = 'markdown_it' in sys.modules\n"
        # A link reference definition: the whole plan is left to markdown-it (plan/sections.py).
        f"linked = parse_plan_text({PLAN!r} + '\\n[ref]: https://example.com\\n', 'docs/plan.md')[1]\n"
        "print(json.dumps([before, 'markdown_it' in sys.modules, [t.title for t in plain], [t.title for t in linked]]))"
    )
    assert fresh(code) == [False, True, ["Note"], ["Note"]]
