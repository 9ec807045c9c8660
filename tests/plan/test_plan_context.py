"""The shared context block and the design doc sections that feed it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pm_agent.plan import (
    ExpectedFiles,
    PlanHeader,
    Task,
    build_shared_context,
    parse_design_text,
)
from pm_agent.plan.context import key_paths, project_name

Write = Callable[..., Path]

DESIGN = """\
# Orders service — Design Document

Intro prose that is not in any section we keep.

## Design principles

- Every write is idempotent, keyed by a request id.
- Money is integer cents.

## Constraints

Runs on one VM with 2 GB of memory; no external queue.

## Conventions

1. `src/` layout, one module per concern.
2. Errors are raised from `orders.errors`, never bare `Exception`.

### Naming

- Tables are plural nouns.

## Modules

| module | holds |
|---|---|
| `orders.api` | HTTP routes |
| `orders.store` | SQL queries |

## Architecture

```text
api -> service -> store
```

The service layer owns transactions.

## Roadmap

- Multi-region, later.
"""


def test_design_sections() -> None:
    doc = parse_design_text(DESIGN)
    assert doc.title == "Orders service — Design Document"
    assert doc.sections["principles"] == [
        "Every write is idempotent, keyed by a request id.",
        "Money is integer cents.",
        "Runs on one VM with 2 GB of memory; no external queue.",
    ]
    assert doc.sections["conventions"] == [
        "src/ layout, one module per concern.",
        "Errors are raised from orders.errors, never bare Exception.",
        "Tables are plural nouns.",
    ]
    assert doc.sections["modules"] == [
        "orders.api: HTTP routes",
        "orders.store: SQL queries",
        "The service layer owns transactions.",
    ]
    assert doc.sections["tech_stack"] == []


def test_long_items_are_compacted() -> None:
    doc = parse_design_text("# D\n\n## Principles\n\n" + "word " * 100 + "\n")
    [item] = doc.sections["principles"]
    assert len(item) == 160
    assert item.endswith("…")


def tasks() -> list[Task]:
    return [
        Task(
            id="1",
            title="A",
            ownership="orders-api",
            expected_files=ExpectedFiles(create=["src/orders/api/routes.py", "tests/api/test_routes.py"]),
        ),
        Task(
            id="2",
            title="B",
            ownership="orders-store",
            expected_files=ExpectedFiles(
                create=["src/orders/store/sql.py"], modify=["src/orders/api/routes.py"]
            ),
        ),
        Task(
            id="3",
            title="C",
            ownership="orders-api",
            expected_files=ExpectedFiles(modify=["src/orders/api/deps.py", "README.md"]),
        ),
    ]


def test_key_paths_most_referenced_first() -> None:
    assert key_paths(tasks()) == ["src/orders/api/", "src/orders/store/", "tests/api/"]


def test_shared_context_from_design_header_and_repo(tmp_path: Path, write: Write) -> None:
    repo = tmp_path / "orders"
    for module in ("api", "store", "__pycache__"):
        write(repo, f"src/orders/{module}/__init__.py")
    header = PlanHeader(
        title="Orders Implementation Plan",
        tech_stack="Python 3.11, Litestar, PostgreSQL",
        architecture="Three layers.",
    )
    context = build_shared_context(header, DESIGN, repo, tasks())
    assert context.project_name == "Orders service"
    assert context.tech_stack == "Python 3.11, Litestar, PostgreSQL"
    assert context.conventions[0] == "src/ layout, one module per concern."
    assert context.principles[:2] == [
        "Architecture: Three layers.",
        "Every write is idempotent, keyed by a request id.",
    ]
    assert context.key_paths == ["src/orders/api/", "src/orders/store/", "tests/api/"]
    assert context.module_boundaries == [
        "orders-api (Tasks 1, 3)",
        "orders-store (Task 2)",
        "src/orders/api/",
        "src/orders/store/",
        "orders.api: HTTP routes",
        "orders.store: SQL queries",
        "The service layer owns transactions.",
    ]
    rendered = context.render()
    assert rendered.startswith(
        "Project: Orders service\nStack: Python 3.11, Litestar, PostgreSQL\nConventions:\n"
    )
    assert "  - src/orders/api/" in rendered


def test_name_falls_back_to_plan_title_then_repo_folder(tmp_path: Path) -> None:
    assert build_shared_context(PlanHeader(title="Shop — implementation plan")).project_name == "Shop"
    repo = tmp_path / "my-project"
    repo.mkdir()
    assert build_shared_context(PlanHeader(), None, repo).project_name == "my-project"
    assert build_shared_context(PlanHeader()).project_name == ""


def test_project_name_cleanup() -> None:
    assert project_name("Textstats Implementation Plan") == "Textstats"
    assert project_name("PM Agent — Design Document") == "PM Agent"
    assert project_name("Plan") == "Plan"


def test_stack_from_design_when_header_has_none() -> None:
    design = "# D\n\n## Tech stack\n\n- Go 1.22\n- SQLite\n"
    assert build_shared_context(PlanHeader(), design).tech_stack == "Go 1.22; SQLite"
