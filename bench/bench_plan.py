"""Benchmark 1 of issue 11: `load_plan` (parse, resolve, classify, triage, queue) on generated plans.

The plans are realistic: superpowers-style sections with steps and code fences (some of which hold
`### Task` lines that must not split the plan), field-style and yaml-contract sections, the heading
styles the parser reads, `Depends on` with prose, ranges and `none`, security and docs tasks, and a
final verification task. `realistic_plan(n)` is deterministic for a given seed (tests/bench checks it).

Where the time went before issue 11 (cProfile of load_plan, 1,000 tasks of bench/run_all.py's old plan):
markdown-it ~40% (its parse ~26%, the syntax tree ~13%); tier classification ~19% (every CRITICAL
pattern searched twice per text, once for the flags and once for the decision); pydantic defaults
looked up per task and three model_copy per task ~10%; the rest the reader itself. At 10,000 tasks
the cyclic GC's passes, which grow with the plan, added ~60% (14 s with it, 9 s without). Now plain
sections are read by plan/fastmd.py and the others by markdown-it, section by section; one tier pass
with a quick look for the rules' literal words first; one copy per task; GC paused while loading.

Where the time went at 088edd1 (CPU time, best of 7, 1,000 tasks, 2026-11-26, load 5-10):
the whole load 201-232 ms CPU, 10,000 tasks 2,193-2,387. Splitting and reading the sections' blocks
(sections.py, fastmd.py) ~64 ms; the reader turning blocks into fields and Tasks ~75 ms; tier
classification ~39 ms; dependencies ~16 ms; queue 6; the one copy per task 6; context 5; triage 3.
(Cuts before that: fastmd skips the code-span split on lines without a backtick and the closer regex
on fence lines without the marker character; `split_range` and `_split_refs` return at once for the
common value; re-enabling the collector used to walk every object the load made at once, 10-25 ms,
and they now move to the old generation unwalked.)

Where the time went at 7e94174 (CPU time, 2026-11-26, load 3-4): 1,000 tasks 185-197 ms, 10,000
2,086-2,310; read_blocks ~58 ms (23,000 lines, ~2.5 us a line, a Block per node), the reader's walk over
the blocks ~25, the field readers in it ~24, Task construction ~12, tiers ~30, resolving ~9.

Where the time goes now (CPU time, 2026-11-27, runs alternating with 7e94174 on the shared 2-core
machine at load 3.5-4.5, which makes every figure slower than at load 3): 1,000 tasks best of 5 178-205
ms (base 199-306), best of 10-15 166-187 (base 210-284); 10,000 tasks best of 5 1,808-2,566 (base
2,591-3,136). Again at load 1.3-2.5 (e730ce4): 1,000 tasks best of 15 155-211 (base 194-262), 10,000
best of 5 2,108-2,208 (base 2,284-2,678). Still ~1.6-1.8x the goal. What changed:
plan/fasttask.py reads a task section's common blocks (`**Label:** value` paragraphs, one-line bullet
items, closed fences, breaks) straight into operations the reader replays on its draft: no Block or
Line node per block, a fence's lines passed over by their first characters (only a yaml fence's code is
kept), a line's label, text and code spans in one possessive regex match (~1.3 us against fastmd's
`_line` ~2 us). It stops before any block it does not know for certain (headings, ordered lists, items
of more than one line, lazy or indented lines, underlines, anything `_line` refuses), always at the
start of a block whose predecessors are closed, and the section's rest is read as before; not after a
top-level title inside the tasks (quotes.py reads quoted plans from the nodes). read_blocks 66 -> 49 ms
measured back to back at load 4. fields: `Task 3, Task 5` and `Task 3 (prose)` read in one match, and
file entries of one code span (`Create:` and a path that needs no cleaning) added at once.
tiers: the CRITICAL path rules' words filter is one trie (it was an alternation of one trie per rule,
tried one by one at every position of a path: 10.5 -> 1.4 us a path), and the LOW path rules get one.
The shortcuts are off with `pm_agent.plan.fastpath.ENABLED = False`: tests/plan/test_plan_fastpath.py
and test_plan_fasttask.py load every corpus plan, generated plans and plans with odd blocks put into
task sections both ways and compare; test_plan_field_shortcuts.py compares the field shortcuts.

What is left (1,000 tasks, one part at a time, load ~4): read_blocks ~49 ms (the heading, the per-block
calls and ~7,250 label/text lines at ~1.3 us); the reader's replay with the field readers ~60: yaml
contracts ~20% of it (10% of the tasks, ~110 us each: libyaml parses, PyYAML's constructor and resolver
are Python), Task construction ~13% (pydantic, ~8 us a Task), labels, file entries, references; tiers
~26 (a task's sources and path words ~11, the candidate rules ~10); resolving ~13; queue, context and
the one copy per task ~15. The replay is not much cheaper than the walk over Blocks was: the field
readers' work, not the walk, is most of it. The goal needs about half of every stage again.

What grew from 1,000 to 10,000 tasks (2026-11-27, a55a721; quiet machine 84 -> 113 us a task): hardly the
work: cachegrind counts 1.108 M instructions a task at 1,000 and 1.172 M at 10,000 (+6%, mostly longer
numbers and names). The rest is memory (a 10,000-task load holds 80-140 MB, 1,000 tasks ~15 MB, which
the 32 MB L3 keeps) and four things that did grow: fields.task_heading's 4,096-entry cache missed both
reads of every heading (20,801 misses for 10,401 headings: the reader walked the nodes only after every
section was read, ~20,000 lines later); canonical_id's 8,192-entry cache was cycled through by each pass
over the ids (26,819 misses of 32,537 calls); graphlib's sorter for the queue (2.6 -> 4-5 us a task);
and _first_title's MULTILINE `^` tried at every character (1.7 -> 3-3.7 us a task). The collector does
not run during a load (gc.callbacks: none at 3,000 tasks); the big strings (decode, split) grow a little
with page faults.

What changed (wip/plan): the reader walks each section's nodes as sections.iter_blocks reads them
(task_heading misses 20,801 -> 10,401, peak traced memory 140 -> 119 MB); canonical_id keeps 32,768 ids
and returns a plain id (`12`) without its regexes (misses 26,819 -> 10,953); the execution queue is
Kahn's order over task positions with the same heap, graphlib only for what it cannot order (queue alone
49 -> 27 ms at 10,000 tasks); the first title is searched for after a literal `\n` (10,000 tasks
29-37 -> 9-10 ms); the loader updates the tasks it read in place of a model_copy each (-21 MB of dicts at
10,000 tasks); a task's paths are listed once for the tier rules; the rules' keys are read a word per
match. Instructions of one load (cachegrind, two loads minus one): 1,000 tasks 1.116 -> 1.000 G,
10,000 tasks 11.77 -> 10.30 G (1.177 -> 1.030 M a task; 1,000 to 10,000 tasks +5.4% before, +3.0% now).
Time, CPU, runs alternating with a55a721 on the shared machine at load 5-7 (every figure slower than on
a quiet one): 10,000 tasks best of 18 loads 1,387 -> 1,217 ms (medians 1,423 -> 1,286); 1,000 tasks
best of 60 101 -> 102 (medians 111 -> 106).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from common import Figure, figure, goal_le

from pm_agent.plan import load_plan

SIZES = (100, 1_000, 3_000, 10_000)
GOALS_MS = {1_000: 100.0, 10_000: 1_000.0}
RUNS = 3
AREAS = ("accounts", "billing", "search", "media", "feeds", "admin", "reports", "docs")
THINGS = ("model", "service", "API routes", "validation", "listing page", "background job", "metrics", "cache")
HEADINGS = ("### Task {i}: {t}", "### Task {i} — {t}", "### Task {i}. {t}")
FENCE_BODIES = (
    # A comment that looks like a task heading: inside a fence it is code, not a new task.
    ("```python", "### Task {j}: not a task, a comment in the code", "```"),
    ("~~~bash", "### Task {j}: echo inside a tilde fence", "~~~"),
    ("````markdown", "```", "### Task {j}: a heading in a quoted fence", "```", "````"),
    ("   ```python", "   ### Task {j}: indented fence", "   ```"),
)


def _title(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(title, area, module slug) of task i."""
    area = AREAS[i % len(AREAS)]
    thing = rng.choice(THINGS)
    slug = thing.replace(" ", "_").lower()
    return f"{area.capitalize()} {thing} {i}", area, f"{slug}_{i}"


def _depends(rng: random.Random, i: int) -> str:
    """A `Depends on` value naming earlier tasks only, in one of the ways people write it."""
    if i == 1 or rng.random() < 0.2:
        return "none"
    earlier = rng.randint(max(1, i - 20), i - 1)
    roll = rng.random()
    if roll < 0.4:
        return f"Task {earlier}"
    if roll < 0.6:
        other = rng.randint(max(1, i - 40), i - 1)
        return f"Task {earlier}, Task {other}" if other != earlier else f"Task {earlier}"
    if roll < 0.75 and earlier + 2 < i:
        return f"Tasks {earlier}-{earlier + 2}"
    return f"Task {earlier} (needs its {rng.choice(THINGS)} merged first)"


def _superpowers(rng: random.Random, i: int, heading: str) -> list[str]:
    title, area, slug = _title(rng, i)
    lines = [heading.format(i=i, t=title), ""]
    lines += [f"**Depends on:** {_depends(rng, i)}", ""]
    lines += ["**Files:**", f"- Create: `src/app/{area}/{slug}.py`"]
    if rng.random() < 0.5:
        lines.append(f"- Modify: `src/app/{area}/__init__.py:{rng.randint(1, 40)}-{rng.randint(41, 90)}`")
    lines += [f"- Test: `tests/{area}/test_{slug}.py`", ""]
    fence = rng.choice(FENCE_BODIES)
    lines += ["**Step 1: Write the failing test**", ""]
    lines += [part.format(j=i + 1) for part in fence]
    lines += ["", f"**Step 2: Implement the {title.lower()}**", ""]
    lines += ["```python", f"def {slug}() -> int:", f"    return {i}", "```", ""]
    lines += ["**Step 3: Run the tests and commit**", "", "```bash", f"pytest tests/{area} -q", "```", ""]
    return lines


def _fields(rng: random.Random, i: int, heading: str) -> list[str]:
    title, area, slug = _title(rng, i)
    if rng.random() < 0.1:
        title = f"Update the {area} README and user guide {i}"
    lines = [heading.format(i=i, t=title), ""]
    lines.append(f"Adds the {title.lower()} so that the {area} pages can use it.")
    if rng.random() < 0.1:
        lines.append("It stores the session token for login (auth).")
    lines += ["", f"**Depends on:** {_depends(rng, i)}", f"**Ownership:** {area}"]
    if rng.random() < 0.3:
        lines.append(f"**Estimate:** {rng.choice(('2h', '30 min', '1d', 'small', 'large', '3'))}")
    if rng.random() < 0.1:
        lines.append(f"**Tier:** {rng.choice(('low', 'normal', 'critical'))}")
    lines += ["", "**Acceptance criteria:**"]
    lines += [f"- [ ] {title} handles case {k}" for k in range(1, rng.randint(2, 4))]
    lines += ["", "**Files:**", f"- Create: `src/app/{area}/{slug}.py`", f"- Test: `tests/{area}/test_{slug}.py`", ""]
    return lines


def _yaml(rng: random.Random, i: int, heading: str) -> list[str]:
    title, area, slug = _title(rng, i)
    deps = [] if i == 1 else [f"task-{rng.randint(max(1, i - 10), i - 1)}"]
    return [
        heading.format(i=i, t=title),
        "",
        "```yaml",
        f"task_id: task-{i}",
        f"ownership: {area}",
        "acceptance_criteria:",
        f"  - {title} is covered by tests",
        "expected_files:",
        "  create:",
        f"    - src/app/{area}/{slug}.py",
        f"depends_on: [{', '.join(deps)}]",
        "```",
        "",
    ]


def realistic_plan(n: int, seed: int = 11) -> str:
    """A plan of `n` tasks (ids 1..n, the last a final verification) mixing the formats the parser reads."""
    rng = random.Random(seed)
    lines = [
        "# Shop platform — implementation plan",
        "",
        "**Goal:** An online shop with accounts, billing, search and reports.",
        "**Architecture:** A Python service with one package per area under `src/app/`.",
        "**Tech Stack:** Python 3.11, FastAPI, PostgreSQL",
        "",
        "---",
        "",
    ]
    for i in range(1, n):
        if i % 25 == 1:
            lines += [f"## Part {i // 25 + 1}: {AREAS[(i // 25) % len(AREAS)]}", ""]
        heading = HEADINGS[0] if rng.random() < 0.7 else rng.choice(HEADINGS[1:])
        style = rng.random()
        if style < 0.6:
            lines += _superpowers(rng, i, heading)
        elif style < 0.9:
            lines += _fields(rng, i, heading)
        else:
            lines += _yaml(rng, i, heading)
    lines += [f"### Task {n}: Final verification", "", "**Step 1: Run the full test suite**", ""]
    return "\n".join(lines) + "\n"


def best_ms(path: Path, runs: int = RUNS) -> float:
    """The best of `runs` wall times of `load_plan(path)`, in ms."""
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        plan = load_plan(path)
        times.append((time.perf_counter() - start) * 1000)
        del plan
    return min(times)


def run() -> list[Figure]:
    """ms and ms/task for each size (best of three), and the linearity ratio."""
    figures: list[Figure] = []
    per_task: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in SIZES:
            path = Path(tmp) / f"plan-{n}.md"
            path.write_text(realistic_plan(n), encoding="utf-8")
            ms = best_ms(path)
            per_task[n] = ms / n
            print(f"[bench] plan: {n} tasks in {ms:.0f} ms", file=sys.stderr, flush=True)
            limit = GOALS_MS.get(n)
            case = f"{n} tasks"
            figures.append(figure("plan parsing", case, "ms", ms, goal_le(ms, limit) if limit else None))
            figures.append(figure("plan parsing", case, "ms/task", ms / n))
    ratio = per_task[SIZES[-1]] / per_task[SIZES[0]]
    figures.append(
        figure("plan parsing", f"{SIZES[-1]} vs {SIZES[0]} tasks", "ms/task ratio", ratio, goal_le(ratio, 2))
    )
    return figures
