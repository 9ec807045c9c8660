"""The bridge as the commands show it: `pm-agent status` reports its backlog, a missing token stops `run` early."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pm_agent.config import PmConfig, render_config
from pm_agent.github.rows import outbox_rows
from pm_agent.plan.models import Plan, Task
from pm_agent.store import default_store_path, open_store
from pm_agent.store.outbox import Outbox, register_hook, unregister_hook


def pm(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run([exe, *args, "-C", str(repo)], capture_output=True, text=True, cwd=repo, timeout=120,
                          check=False, env=env, stdin=subprocess.DEVNULL)  # fmt: skip


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "app"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.name", "T"], ["config", "user.email", "t@e.st"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def test_status_shows_the_pending_github_actions_and_the_last_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    path = default_store_path(repo)
    register_hook(path, outbox_rows)
    try:
        with open_store(path) as store:
            plan = Plan(plan_id="demo", path="plan.md", tasks=[Task(id="1", title="One")])
            run_id = store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={},
                                      config={}).id  # fmt: skip
            outbox = Outbox(store.engine, store.now)
            first, second = outbox.pending(run_id)
            outbox.mark_sent(first.id)
            outbox.mark_failed(second.id, "task_issue: 502 Bad Gateway")
    finally:
        unregister_hook(path)
    done = pm(repo, "status")
    assert done.returncode == 0, done.stderr
    assert "GitHub: 1 pending, last error: task_issue: 502 Bad Gateway" in done.stdout
    data = json.loads(pm(repo, "status", "--json").stdout)
    assert data["github"] == {"pending": 1, "last_error": "task_issue: 502 Bad Gateway"}


def test_a_run_without_its_token_stops_before_writing_anything(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = PmConfig.model_validate({"github": {"repo": "acme/app", "token_env": "PM_TEST_GH_TOKEN"}})
    (repo / "pm-agent.yaml").write_text(render_config(config), encoding="utf-8")
    (repo / "plan.md").write_text("# demo\n\n### Task 1: One\n\n**Acceptance criteria:**\n- works\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=repo, check=True)
    env = {k: v for k, v in os.environ.items() if k != "PM_TEST_GH_TOKEN"}
    env.update(ANTHROPIC_API_KEY="unused", ANTHROPIC_BASE_URL="http://127.0.0.1:9")  # the agent's login passes
    done = pm(repo, "run", "plan.md", "--no-input", env=env)
    assert done.returncode != 0
    assert "PM_TEST_GH_TOKEN" in done.stdout + done.stderr, done.stdout + done.stderr
    assert not (repo / ".pm-agent").exists()


def test_pm_agent_answer_queues_the_answered_comment_when_the_bridge_is_on(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = PmConfig.model_validate({"github": {"repo": "acme/app"}})
    (repo / "pm-agent.yaml").write_text(render_config(config), encoding="utf-8")
    path = default_store_path(repo)
    with open_store(path) as store:  # no hook in this process: only the `pm-agent answer` process writes rows
        plan = Plan(plan_id="demo", path="plan.md", tasks=[Task(id="1", title="One")])
        run_id = store.create_run(plan, baseline_sha="a" * 40, working_branch="pm/demo", shared_context={},
                                  config={}).id  # fmt: skip
        esc = store.open_escalation(run_id, "1", source="q", problem="which?", impact="x", options=["a", "b"],
                                    recommended="a", blocking=True, session_id=None)  # fmt: skip
    done = pm(repo, "answer", str(esc.id), "a")
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(path) as store:
        rows = Outbox(store.engine, store.now).pending(run_id)
        assert [(r.key, r.payload) for r in rows] == [
            (f"answered:{run_id}:{esc.id}", {"escalation_id": esc.id, "task_id": "1"})
        ]
