"""Detection table rows for Ruby (Gemfile) and PHP (composer.json) projects: each tool by its own configuration."""

from __future__ import annotations

import json
from pathlib import Path

from pm_agent.preflight.detect import Slot

from .conftest import Machine, rejected_for, write

GEMFILE = 'source "https://rubygems.org"\ngem "rspec"\n'


def test_rspec_and_rubocop_through_bundler(repo: Path, machine: Machine) -> None:
    write(repo, {"Gemfile": GEMFILE, ".rspec": "--require spec_helper\n", ".rubocop.yml": "AllCops: {}\n"})
    detection = machine.script("bundle", "exit 0").detect(repo)
    env = detection.environment
    assert (env.test_command, env.lint_command) == ("bundle exec rspec", "bundle exec rubocop")
    assert detection.chosen[Slot.TEST].reason == "Gemfile and .rspec: RSpec"
    assert detection.problems == {}


def test_without_bundler_the_commands_say_so(repo: Path, machine: Machine) -> None:
    write(repo, {"Gemfile": GEMFILE, "spec/cart_spec.rb": "", "Gemfile.lock": ""})
    detection = machine.detect(repo)
    assert detection.environment.test_command == "bundle exec rspec"
    assert detection.problems == {Slot.TEST: "not installed: bundle is not on PATH (gem install bundler)"}


def test_rails_tests_minitest_by_rake_standard_and_sorbet(repo: Path, machine: Machine) -> None:
    write(
        repo,
        {"Gemfile": GEMFILE + 'gem "standard"\n', "bin/rails": "", "test/models/cart_test.rb": "", "sorbet/config": ""},
    )
    detection = machine.script("bundle", "exit 0").detect(repo)
    env = detection.environment
    assert (env.test_command, env.lint_command, env.typecheck_command) == (
        "bin/rails test",
        "bundle exec standardrb",
        "bundle exec srb tc",
    )
    (repo / "bin" / "rails").unlink()
    write(repo, {"Rakefile": "require 'rake/testtask'\n"})
    assert machine.detect(repo).environment.test_command == "bundle exec rake test"


def test_rspec_comes_before_the_rails_runner(repo: Path, machine: Machine) -> None:
    write(repo, {"Gemfile": GEMFILE, "spec/cart_spec.rb": "", "bin/rails": "", "test/cart_test.rb": ""})
    detection = machine.script("bundle", "exit 0").detect(repo)
    assert detection.environment.test_command == "bundle exec rspec"
    assert rejected_for(detection, Slot.TEST)["bin/rails test"].startswith("bundle exec rspec is preferred")


def test_a_gemfile_without_any_configured_tool_gives_nothing(repo: Path, machine: Machine) -> None:
    write(repo, {"Gemfile": GEMFILE})
    assert machine.script("bundle", "exit 0").detect(repo).chosen == {}


def _composer(**fields: object) -> str:
    return json.dumps({"name": "shop/cart", **fields})


INSTALL = "composer install --no-interaction --no-progress"
DEV = {"phpunit/phpunit": "^10", "squizlabs/php_codesniffer": "^3", "phpstan/phpstan": "^1"}


def test_phpunit_phpcs_and_phpstan_from_vendor_bin_after_composer_install(repo: Path, machine: Machine) -> None:
    files = {"phpunit.xml.dist": "<phpunit/>\n", "phpcs.xml": "<ruleset/>\n", "phpstan.neon": "parameters: {}\n"}
    write(repo, {"composer.json": _composer(**{"require-dev": DEV}), **files})
    detection = machine.script("composer", "exit 0").detect(repo)
    env = detection.environment
    assert (env.setup_command, env.test_command, env.lint_command, env.typecheck_command) == (
        INSTALL,  # once per worktree, before its agent and its gates
        "vendor/bin/phpunit",
        "vendor/bin/phpcs",
        "vendor/bin/phpstan analyse --no-progress --error-format=raw",
    )
    assert detection.chosen[Slot.TEST].reason == "phpunit.xml.dist: PHPUnit, phpunit/phpunit in composer.json"
    assert detection.problems == {}
    (machine.bindir / "composer").unlink()
    assert set(machine.detect(repo).problems.values()) == {"not installed: composer is not on PATH"}


def test_a_tool_the_project_does_not_require_runs_from_path(repo: Path, machine: Machine) -> None:
    write(repo, {"composer.json": _composer(), "phpunit.xml": "<phpunit/>\n", "psalm.xml": "<psalm/>\n"})
    detection = machine.script("composer", "exit 0").script("phpunit", "exit 0").detect(repo)
    assert detection.environment.test_command == "phpunit"
    assert (
        detection.chosen[Slot.TEST].reason
        == "phpunit.xml: PHPUnit, phpunit on PATH (phpunit/phpunit is not in composer.json)"
    )
    assert detection.problems == {
        Slot.TYPECHECK: "not installed: vimeo/psalm is neither in composer.json nor psalm on PATH"
    }


def test_the_composer_test_script_comes_first_and_pest_replaces_phpunit(repo: Path, machine: Machine) -> None:
    composer = _composer(scripts={"test": "pest"}, **{"require-dev": {"pestphp/pest": "^2.0"}})
    write(repo, {"composer.json": composer, "phpunit.xml": "<phpunit/>\n"})
    detection = machine.script("composer", "exit 0").detect(repo)
    assert detection.environment.test_command == "composer test"
    assert rejected_for(detection, Slot.TEST) == {
        "vendor/bin/pest": "composer test is preferred (composer.json scripts.test)"
    }


def test_a_broken_composer_json_is_said_and_its_configured_tools_still_found(repo: Path, machine: Machine) -> None:
    write(repo, {"composer.json": "{", "phpunit.xml": "<phpunit/>\n"})
    detection = machine.script("composer", "exit 0").script("phpunit", "exit 0").detect(repo)
    assert (detection.environment.setup_command, detection.environment.test_command) == (INSTALL, "phpunit")
    assert rejected_for(detection, None)["composer.json"].startswith("not valid JSON")
