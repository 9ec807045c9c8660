from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.config import PmConfig, detect_defaults, load_config, parse_config, render_config
from pm_agent.errors import ConfigError
from pm_agent.plan.models import Tier
from pm_agent.preflight.detect import detect_environment


def test_defaults_follow_seed_001_section_9(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert (config.max_parallel_agents, config.retry_budget, config.anti_starvation_interval) == (3, 2, 3)
    assert config.progress_report_task_interval == 3
    assert config.progress_report_time_interval_min == 30
    assert config.patch_size_limit_files == 15
    assert config.checkpoint_tags is True
    assert (config.review_artifacts_dir, config.release_manifest_dir) == ("docs/reviews", "docs/releases")
    assert config.parallel_tiers == [Tier.LOW]


def test_detected_defaults_render_and_parse_back_to_the_same(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n[tool.ruff]\n[tool.mypy]\n", encoding="utf-8")
    config = detect_defaults(tmp_path)
    assert config.environment == detect_environment(tmp_path).environment
    assert load_config(tmp_path) == config, "without pm-agent.yaml the detected commands apply"
    env = config.environment
    assert (env.test_command or "").endswith(" -m pytest -q")  # python or python3: whichever runs here
    assert (env.lint_command or "").endswith("ruff check --no-fix .")
    assert (env.typecheck_command or "").endswith("mypy .")
    text = render_config(config)
    assert "# Fix attempts before escalation." in text
    assert parse_config(text, tmp_path / "pm-agent.yaml") == config


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("retry_budget: 2\nretry_budgte: 3\n", 2, "retry_budgte: unknown key"),
        ("agent:\n  max_turns: 5\n  modle: x\n", 3, "agent.modle: unknown key"),
        ("max_parallel_agents: 0\n", 1, "max_parallel_agents: Input should be greater than or equal to 1"),
        ("parallel_tiers: [low, urgent]\n", 1, "parallel_tiers.1"),
        ("retry_budget: [\n", 2, "not valid YAML"),
        ("- a\n- b\n", 1, "must be a mapping"),
    ],
)
def test_bad_config_names_file_line_and_key(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = tmp_path / "pm-agent.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert info.value.path == path
    assert info.value.line == line
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_config_file_overrides_defaults(tmp_path: Path) -> None:
    (tmp_path / "pm-agent.yaml").write_text(
        "max_parallel_agents: 2\nenvironment:\n  test_command: make check\nagent:\n  stuck_after_s: 5\n",
        encoding="utf-8",
    )
    config = load_config(tmp_path)
    assert config == PmConfig.model_validate(
        {
            "max_parallel_agents": 2,
            "environment": {"test_command": "make check"},
            "agent": {"stuck_after_s": 5},
        }
    )
