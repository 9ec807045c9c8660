"""make mutation: mutmut on the gates, the signal parser and plan inference; the score of each module.

    make mutation                              # or: .venv/bin/python bench/mutation.py
    .venv/bin/python bench/mutation.py --fresh # forget every cached verdict first (rm -r mutants/)
    .venv/bin/python bench/mutation.py --report  # print the scores of the last run again

What is mutated and which tests run is [tool.mutmut] in pyproject.toml: the fast tests of tests/gates,
tests/signals and tests/plan (`-m "not claude and not slow"`). mutmut keeps a verdict per mutant in
mutants/ and only tests new or changed functions again; a mutant that survived is tested again on every
run here, since a test added since may kill it now. A module's score is detected / (mutants - equivalent),
where detected is killed, timed out or caught by the type checker. Equivalent mutants (no test can tell
them apart from the source) are listed with their reason in bench/mutation_equivalent.txt, printed below
the scores. The gates and the signal parser are held to MIN_SCORE: the run exits 1 when one is below.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTMUT = str(Path(sys.executable).parent / "mutmut")
EQUIVALENT_FILE = ROOT / "bench" / "mutation_equivalent.txt"
MIN_SCORE = 90.0
HELD = ("pm_agent.gates.", "pm_agent.signals.")
DETECTED = frozenset({"killed", "timeout", "caught by type check", "segfault"})
# `mutmut results` prints one `    <mutant>: <status>` line per mutant
_RESULT = re.compile(r"^\s+(?P<name>\S+): (?P<status>.+)$")
# pm_agent.gates.alignment.x__norm__mutmut_3, pm_agent.gates.models.xǁGateResultǁmethod__mutmut_1
_MODULE = re.compile(r"^(?P<module>.+?)\.x(?:_|ǁ)")


@dataclass
class Module:
    """The verdicts of one module's mutants."""

    name: str
    statuses: Counter[str] = field(default_factory=Counter)
    survivors: list[str] = field(default_factory=list)
    equivalent: int = 0

    @property
    def total(self) -> int:
        return sum(self.statuses.values())

    @property
    def detected(self) -> int:
        return sum(n for status, n in self.statuses.items() if status in DETECTED)

    @property
    def score(self) -> float:
        counted = self.total - self.equivalent
        return 100.0 * self.detected / counted if counted else 100.0


def results() -> dict[str, str]:
    """Every mutant mutmut knows in mutants/, with its status."""
    out = subprocess.run([MUTMUT, "results", "--all", "true"], cwd=ROOT, capture_output=True, text=True, check=True)
    found = {}
    for line in out.stdout.splitlines():
        match = _RESULT.match(line)
        if match:
            found[match["name"]] = match["status"].strip()
    return found


def equivalents() -> dict[str, str]:
    """Mutant name -> why it is equivalent, from bench/mutation_equivalent.txt (`name  # reason`)."""
    listed = {}
    for raw in EQUIVALENT_FILE.read_text(encoding="utf-8").splitlines():
        name, _, reason = raw.partition("#")
        if name.strip():
            listed[name.strip()] = reason.strip()
    return listed


def run_mutmut(names: list[str], children: int) -> None:
    """`mutmut run`; explicit names are tested again even when they have a cached verdict."""
    command = [MUTMUT, "run", "--max-children", str(children), *names]
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        # mutmut's own output is a spinner; run it again visibly so the failure can be read
        print(f"mutmut failed (exit {done.returncode}); its output:", flush=True)
        subprocess.run(command, cwd=ROOT, check=False)
        raise SystemExit(done.returncode)


def tally(found: dict[str, str], listed: dict[str, str]) -> dict[str, Module]:
    """Verdicts grouped by module; listed equivalents that survive are counted apart."""
    modules: dict[str, Module] = {}
    for name, status in sorted(found.items()):
        match = _MODULE.match(name)
        module = modules.setdefault(match["module"] if match else "?", Module(match["module"] if match else "?"))
        module.statuses[status] += 1
        if status in DETECTED:
            continue
        if name in listed and status == "survived":
            module.equivalent += 1
        else:
            module.survivors.append(f"{name} ({status})")
    return modules


def report(modules: dict[str, Module], listed: dict[str, str], found: dict[str, str]) -> bool:
    """Print the table, the survivors and the equivalents; False when a held module is below MIN_SCORE."""
    print(f"{'module':42} {'mutants':>7} {'detected':>8} {'equiv.':>6} {'other':>5} {'score':>7}")
    ok = True
    for module in sorted(modules.values(), key=lambda m: m.name):
        held = module.name.startswith(HELD)
        low = held and module.score < MIN_SCORE
        ok = ok and not low
        other = module.total - module.detected - module.equivalent
        flag = f"  < {MIN_SCORE:.0f}%" if low else ""
        print(
            f"{module.name:42} {module.total:7} {module.detected:8} {module.equivalent:6} {other:5}"
            f" {module.score:6.1f}%{flag}"
        )
    total = sum(m.total for m in modules.values())
    detected = sum(m.detected for m in modules.values())
    equivalent = sum(m.equivalent for m in modules.values())
    print(f"{'all':42} {total:7} {detected:8} {equivalent:6} {'':5} {100.0 * detected / (total - equivalent):6.1f}%")
    survivors = [s for m in modules.values() for s in m.survivors]
    if survivors:
        print(f"\nnot detected ({len(survivors)}; `.venv/bin/mutmut show NAME` shows the change):")
        print("\n".join(f"  {s}" for s in survivors))
    print(f"\nequivalent mutants, not counted ({EQUIVALENT_FILE.relative_to(ROOT)}):")
    for name, reason in listed.items():
        state = found.get(name, "not generated: the source changed, check the list")
        print(f"  {name}: {reason}" + ("" if state == "survived" else f" [now {state}]"))
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="delete mutants/ first: every mutant is tested again")
    parser.add_argument("--max-children", type=int, default=2, help="parallel test processes (default 2)")
    parser.add_argument("--report", action="store_true", help="only print the scores of the last run")
    args = parser.parse_args()
    mutants = ROOT / "mutants"
    if args.report:
        found = results()
        listed = equivalents()
        return 0 if report(tally(found, listed), listed, found) else 1
    if args.fresh:
        shutil.rmtree(mutants, ignore_errors=True)
    # mutmut copies tests/ over the old copy: a test file deleted since would still run from mutants/tests
    shutil.rmtree(mutants / "tests", ignore_errors=True)
    before = results() if mutants.is_dir() else {}
    run_mutmut([], args.max_children)
    found = results()
    # a verdict cached from before this run (survived, no tests...) is tested again with today's tests; a mutant
    # not checked before was just tested by the run above
    again = [
        name
        for name, status in before.items()
        if status not in DETECTED and status != "not checked" and found.get(name, "killed") not in DETECTED
    ]
    if again:
        run_mutmut(again, args.max_children)
        found = results()
    listed = equivalents()
    ok = report(tally(found, listed), listed, found)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
