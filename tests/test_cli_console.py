"""The library prints nothing: only the CLI package prints, through its ConsoleListener and consoles."""

from __future__ import annotations

import ast
import io
import re
import time
from pathlib import Path

from rich.console import Console

import pm_agent
from pm_agent.cli.console import ConsoleListener

PACKAGE = Path(pm_agent.__file__).resolve().parent


def _printing(path: Path, root: Path = PACKAGE) -> list[str]:
    """`print(...)` calls and imports of rich's Console in one module, as `file:line what`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"{where} print()")
        if isinstance(node, ast.ImportFrom) and node.module == "rich.console":
            found += [f"{where} rich Console" for alias in node.names if alias.name == "Console"]
    return found


def test_no_module_outside_the_cli_prints() -> None:
    modules = [p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts[:1]]
    assert len(modules) > 100, "the package was not found"
    assert [hit for path in sorted(modules) for hit in _printing(path)] == []


def test_the_check_sees_a_print_and_a_console(tmp_path: Path) -> None:
    module = PACKAGE / "cli" / "console.py"
    assert any(hit.endswith("rich Console") for hit in _printing(module))
    assert _printing(PACKAGE / "cli" / "views.py") == []
    assert not _printing(PACKAGE / "engine" / "events.py")
    probe = tmp_path / "probe.py"
    probe.write_text("print('x')\n", encoding="utf-8")
    assert _printing(probe, tmp_path) == ["probe.py:1 print()"]


def test_console_listener_prints_one_stamped_line_per_event_and_blocks_for_reports() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, no_color=True, highlight=False, soft_wrap=True)
    listener = ConsoleListener(console=console, started=time.monotonic())
    listener.emit("task.moved", "task-1: received -> ready [sic]")
    listener.emit("report.progress", "PROGRESS — calc\nCompleted: 1/2 tasks")
    listener.emit("custom", "plain")
    lines = buffer.getvalue().splitlines()
    assert lines[0].split(" ", 1)[1] == "task.moved           task-1: received -> ready [sic]"
    assert lines[1].split(" ", 1)[1] == "report.progress"
    assert lines[2:4] == ["PROGRESS — calc", "Completed: 1/2 tasks"]
    assert lines[4].split(" ", 1)[1] == "custom               plain"
    assert all(line.startswith("00:0") for line in (lines[0], lines[1], lines[4])), lines


def test_a_terminal_gets_the_same_lines_styled() -> None:
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=200, force_terminal=True, color_system="standard", highlight=False, soft_wrap=True
    )
    listener = ConsoleListener(console=console, started=time.monotonic())
    listener.emit("task.moved", "task-1: received -> ready [sic] :warning:")
    listener.emit("report.progress", "PROGRESS — calc\nCompleted: 1/2 tasks")
    text = buffer.getvalue()
    assert "\x1b[36m" in text  # the task kind in cyan
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()
    assert plain[0].split(" ", 1)[1] == "task.moved           task-1: received -> ready [sic] \u26a0"
    assert plain[1].split(" ", 1)[1] == "report.progress"
    assert plain[2:] == ["PROGRESS — calc", "Completed: 1/2 tasks"]


def test_piped_output_is_written_as_is_without_markup_or_emoji() -> None:
    buffer = io.StringIO()
    listener = ConsoleListener(console=Console(file=buffer, width=40), started=time.monotonic())
    long = "x" * 120 + " [bold]not markup[/] :warning:"
    listener.emit("gate.failed", long)
    line = buffer.getvalue()
    assert line.count("\n") == 1, "a long line is not wrapped"
    assert line.rstrip("\n").split(" ", 1)[1] == f"{'gate.failed':<20} {long}"
