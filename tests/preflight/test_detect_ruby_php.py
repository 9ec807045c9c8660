"""Detection table rows for Ruby (Gemfile) and PHP (composer.json) projects: each tool by its own configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm_agent.gates.narrow import command_for_test_files
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


# msgpack-ruby's Rakefile (abridged): its C extension is built by rake-compiler into lib/msgpack/msgpack.so, which
# git ignores, and its spec task compiles first; `bundle exec rspec` in a clean worktree fails with "cannot load
# such file -- msgpack/msgpack".
MSGPACK_RAKEFILE = """require 'bundler'
require 'rspec/core/rake_task'

task :spec => :compile

require 'rake/extensiontask'
Rake::ExtensionTask.new('msgpack', spec) do |ext|
  ext.ext_dir = 'ext/msgpack'
end

spec_config = lambda do |t|
  t.pattern = 'spec/{,cruby/}*_spec.rb'
end
RSpec::Core::RakeTask.new(:spec, &spec_config)
"""
RSPEC_TASK = "require 'rspec/core/rake_task'\nRSpec::Core::RakeTask.new(:spec)\n"
EXTENSION = "require 'rake/extensiontask'\nRake::ExtensionTask.new('demo')\n"


def test_a_spec_task_that_compiles_first_runs_through_rake(repo: Path, machine: Machine) -> None:
    write(repo, {"Gemfile": GEMFILE, "Rakefile": MSGPACK_RAKEFILE, "spec/packer_spec.rb": "", ".gitignore": "*.so\n"})
    detection = machine.script("bundle", "exit 0").detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == "bundle exec rake spec"
    assert chosen.reason == (
        "Rakefile line 4: `task :spec => :compile`: the Rakefile's spec task runs :compile first, which"
        " `bundle exec rspec` skips; pm-agent cannot narrow a rake task to a task's test files: each test gate runs"
        " the whole suite"
    )
    assert rejected_for(detection, Slot.TEST)["bundle exec rspec"].startswith("bundle exec rake spec is preferred")
    # As the reason says: a task's gate runs the whole suite (rake would read a path as a task's name).
    assert command_for_test_files(chosen.command, ["spec/packer_spec.rb"], repo) == "bundle exec rake spec"


@pytest.mark.parametrize(
    ("files", "command"),
    [
        # rake-compiler without the spec task depending on compile: compile, then spec.
        ({"Rakefile": EXTENSION + RSPEC_TASK, "spec/a_spec.rb": ""}, "bundle exec rake compile spec"),
        (
            {"Rakefile": EXTENSION + "Rake::TestTask.new do |t|\nend\n", "test/a_test.rb": ""},
            "bundle exec rake compile test",
        ),
        # `task spec: :compile` alone defines a spec task that runs no spec: rspec itself.
        ({"Rakefile": EXTENSION + "task spec: :compile\n", "spec/a_spec.rb": ""}, "bundle exec rspec"),
        # Nothing to build first: rspec, which the gates narrow to a task's spec files.
        ({"Rakefile": RSPEC_TASK, ".rspec": ""}, "bundle exec rspec"),
        ({"Rakefile": "task spec: [:compile]\n" + RSPEC_TASK, "spec/a_spec.rb": ""}, "bundle exec rake spec"),
    ],
)
def test_what_the_rakefile_builds_before_the_specs(
    repo: Path, machine: Machine, files: dict[str, str], command: str
) -> None:
    write(repo, {"Gemfile": GEMFILE, **files})
    chosen = machine.script("bundle", "exit 0").detect(repo).chosen[Slot.TEST]
    assert chosen.command == command
    if "rake" in command:
        assert "pm-agent cannot narrow a rake task" in chosen.reason


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
