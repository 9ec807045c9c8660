"""A worktree under `.pm-agent/` lives inside the repository, so tools that look for their settings up the folders
(ESLint's legacy `.eslintrc*`, merged until one says `root: true`) would also read the main checkout's. pm-agent's
folder ends that search. Checked with ESLint 8 on redux-thunk (Yarn 4, its own install in the worktree): without
the marker its lint failed with "ESLint couldn't determine the plugin uniquely"; with it, exit 0 as on the main
checkout. (ESLint is not installed here: the test checks the folders ESLint walks.)"""

from __future__ import annotations

import json
from pathlib import Path

from pm_agent.preflight.baseline import run_baseline
from pm_agent.statefile import mark_state_dir
from pm_agent.testing.repo import commit_all, git
from pm_agent.vcs import Git

# What ESLint's cascade sees from the command's folder up: each folder holding an .eslintrc.json, nearest first.
WALK = (
    'd="$PWD"; while [ "$d" != / ]; do [ -e "$d/.eslintrc.json" ] && echo "$d|$(tr -d " \n" < "$d/.eslintrc.json")";'
    ' d=$(dirname "$d"); done'
)


def test_the_search_for_settings_from_a_worktree_stops_at_pm_agents_folder(git_repo: Path) -> None:
    (git_repo / ".eslintrc.json").write_text('{"plugins": ["demo"]}\n', encoding="utf-8")  # no `root`
    commit_all(git_repo, "eslint settings")
    sha = git(git_repo, "rev-parse", "HEAD").strip()
    state = git_repo / ".pm-agent"
    baseline = run_baseline(Git(git_repo), state, sha, {"lint_command": WALK}, timeout_s=30)
    lines = [line.split("|", 1) for line in baseline.commands[0].output_tail.splitlines()]
    found = [(Path(folder), json.loads(text)) for folder, text in lines]
    (checkout, _), (stop, says) = found[0], found[1]
    assert checkout.is_relative_to(state / "preflight")  # the worktree's own settings come first
    assert (stop, says) == (state.resolve(), {"root": True})
    assert [folder for folder, _ in found].index(git_repo.resolve()) > 1  # the main checkout's come after the stop
    assert not (state / ".eslintrc.json").exists()  # `pm-agent init` leaves nothing in the repository


def test_a_run_keeps_the_marker_and_never_rewrites_it(tmp_path: Path) -> None:
    state = tmp_path / ".pm-agent"
    made = mark_state_dir(state)
    assert made == state / ".eslintrc.json"
    assert json.loads(made.read_text(encoding="utf-8")) == {"root": True}
    made.write_text('{"root": true, "kept": 1}\n', encoding="utf-8")
    assert mark_state_dir(state) is None
    assert "kept" in made.read_text(encoding="utf-8")
