"""pm-agent benchmarks: each prints its figures; none asserts a time (tests stay deterministic).

    make bench                                # or: .venv/bin/python bench/run_all.py
    .venv/bin/python bench/run_all.py plan status   # only these benchmarks

Each module in BENCHMARKS has `run() -> list[Figure]`. The figures are printed as one table, with each goal
beside its figure; a run of all of them writes bench/results.json with the machine they came from, and the
same table into README.md (between its bench markers), so the README shows the latest figures.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from common import Figure, compile_sources, machine, markdown, table, update_readme, write_results

# name -> module; the order of the issue: parsing, scheduling, the loop, read commands, task setup.
BENCHMARKS = {
    "plan": "bench_plan",
    "schedule": "bench_schedule",
    "loop": "bench_loop",
    "status": "bench_status",
    "setup": "bench_setup",
}


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    compile_sources()
    figures: list[Figure] = []
    for name in names:
        start = time.perf_counter()
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        module = importlib.import_module(BENCHMARKS[name])
        figures.extend(module.run())
        print(f"[bench] {name} done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    m = machine()
    print(f"pm-agent benchmarks, {m['date']}, commit {m['commit']}: {m['cpus']} x {m['cpu']}, Python {m['python']}")
    print(table(figures))
    here = Path(__file__).parent
    if names == list(BENCHMARKS):  # a partial run must not pass for the whole table
        write_results(here / "results.json", figures)
        readme = here.parent / "README.md"
        # The README takes the figures that have a goal; results.json and the printed table have them all.
        goals = [f for f in figures if f.goal]
        note = f"\n\nThe {len(goals)} figures with a goal; all {len(figures)} are in `bench/results.json`."
        updated = update_readme(readme, markdown(goals, m) + note)
        print(f"written: {here / 'results.json'}" + (f" and the table in {readme}" if updated else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
