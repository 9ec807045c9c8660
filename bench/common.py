"""What every benchmark returns: figures, each with its goal, printed as one table by run_all.py."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Figure:
    """One measured figure: which benchmark, which case, the value and its unit, and the goal beside it."""

    bench: str  # e.g. "plan parsing"
    case: str  # e.g. "1000 tasks"
    metric: str  # e.g. "ms", "ms/task", "x lower bound"
    value: float
    goal: str = ""  # e.g. "<= 100"; empty when the figure is informative only
    met: bool | None = None  # None when there is no goal


def goal_le(value: float, limit: float) -> tuple[str, bool]:
    """A goal of at most `limit`, and whether `value` meets it."""
    return f"<= {limit:g}", value <= limit


def goal_ge(value: float, limit: float) -> tuple[str, bool]:
    """A goal of at least `limit`, and whether `value` meets it."""
    return f">= {limit:g}", value >= limit


def figure(bench: str, case: str, metric: str, value: float, goal: tuple[str, bool] | None = None) -> Figure:
    """A Figure, with its goal from goal_le/goal_ge when there is one."""
    text, met = goal if goal is not None else ("", None)
    return Figure(bench, case, metric, value, text, met)


def table(figures: Sequence[Figure]) -> str:
    """The figures as one fixed-width table."""
    rows = [("benchmark", "case", "figure", "value", "goal", "met")]
    for f in figures:
        met = "" if f.met is None else ("yes" if f.met else "NO")
        rows.append((f.bench, f.case, f.metric, f"{f.value:,.3f}".rstrip("0").rstrip("."), f.goal, met))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def line(row: tuple[str, ...]) -> str:
        cells = (c.rjust(w) if i == 3 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        return "  ".join(cells)

    lines = [line(r) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def machine() -> dict[str, object]:
    """Where the figures came from."""
    try:
        here = Path(__file__).parent
        git = ["git", "rev-parse", "--short", "HEAD"]
        sha = subprocess.run(git, capture_output=True, text=True, check=False, cwd=here).stdout.strip()
    except OSError:
        sha = ""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": sha,
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        "cpu": cpu,
        "cpus": os.cpu_count(),
    }


def markdown(figures: Sequence[Figure], where: dict[str, object]) -> str:
    """The figures as a Markdown table, headed by the machine they came from."""
    lines = [
        f"Measured {where['date']} at commit {where['commit']} on {where['cpus']} x {where['cpu']},"
        f" {where['system']}, Python {where['python']}.",
        "",
        "| benchmark | case | figure | value | goal | met |",
        "|---|---|---|---:|---|---|",
    ]
    for f in figures:
        met = "" if f.met is None else ("yes" if f.met else "**no**")
        value = f"{f.value:,.3f}".rstrip("0").rstrip(".")
        lines.append(f"| {f.bench} | {f.case} | {f.metric} | {value} | {f.goal} | {met} |")
    return "\n".join(lines)


def update_readme(readme: Path, text: str) -> bool:
    """Put `text` between the README's bench markers; False when the markers are missing."""
    start, end = "<!-- bench:start -->", "<!-- bench:end -->"
    body = readme.read_text(encoding="utf-8")
    if start not in body or end not in body:
        return False
    head, _, rest = body.partition(start)
    _, _, tail = rest.partition(end)
    readme.write_text(f"{head}{start}\n{text}\n{end}{tail}", encoding="utf-8")
    return True


def compile_sources() -> None:
    """Byte-compile pm_agent's modules first, as installing it does.

    With PYTHONDONTWRITEBYTECODE (set on this machine, and by bench_loop for its runs), a module edited since
    its .pyc was written, or a fresh clone's every module, is compiled from source again by each process that
    imports it: a few hundred ms of CPU per pm-agent process (and per agent-side child) that an installed
    pm-agent never pays, and that would be counted in the figures.
    """
    import compileall

    import pm_agent

    compileall.compile_dir(Path(pm_agent.__file__).parent, quiet=1)


def write_results(path: Path, figures: Sequence[Figure]) -> None:
    """bench/results.json: the machine and every figure."""
    data = {"machine": machine(), "figures": [asdict(f) for f in figures]}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
