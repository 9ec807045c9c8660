"""Makefile targets as gate commands, each proven by `make -n <target>` in the repository."""

from __future__ import annotations

from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot
from pm_agent.preflight._probe import Probe

TARGETS: dict[Slot, tuple[str, ...]] = {
    Slot.LINT: ("lint",),
    Slot.TYPECHECK: ("typecheck", "type-check", "mypy"),
    Slot.TEST: ("test",),
    Slot.BUILD: ("build",),
    # Checks only: a `format` or `fmt` target rewrites the files (`black .`, `ruff format`), which a gate must not.
    Slot.FORMAT: ("format-check", "check-format", "fmt-check", "check-fmt", "lint-format"),
}
"""Target names per slot, in order of preference."""
_QUIET = frozenset({Slot.FORMAT})
"""Slots whose targets most Makefiles lack: none of them there is no news worth a rejected line."""


def detect_make(probe: Probe) -> Finding | None:
    """`make <target>` for each slot whose target dry-runs; None without a Makefile."""
    makefile = probe.makefile()
    if makefile is None:
        return None
    if probe.which("make") is None:
        return Finding(rejected=[Rejected("make", f"{makefile} present but make is not on PATH")])
    found = Finding()
    for slot, targets in TARGETS.items():
        whys: list[str] = []
        for target in targets:
            why = probe.make_target(target)
            if why is None:
                missing = probe.recipe_missing(target)
                problem = f"not installed: its recipe runs {missing}, which is not on PATH" if missing else None
                reason = f"{makefile}: make -n {target} succeeds"
                found.candidates.append(Candidate(slot, f"make {target}", reason, problem))
                break
            whys.append(why)
        else:
            if slot in _QUIET and all(f"{makefile} has no " in why for why in whys):
                continue
            found.rejected.append(Rejected(f"make {'/'.join(targets)}", _why_none(makefile, targets, whys), slot))
    return found


def _why_none(makefile: str, targets: tuple[str, ...], whys: list[str]) -> str:
    """One line when every target failed: several absent targets are named once."""
    if len(whys) > 1 and all(f"{makefile} has no " in why for why in whys):
        return f"{makefile} has none of the targets {', '.join(targets)} (make -n failed)"
    return "; ".join(whys)


__all__ = ["TARGETS", "detect_make"]
