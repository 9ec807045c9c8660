"""Ruby (Gemfile) and PHP (composer.json): their test runners, linters and static analysers, as a project sets
them up.

Ruby's tools run through `bundle exec`, so the Gemfile's versions are the ones used; PHP's from `vendor/bin/`
when composer.json requires them (else from PATH), after the setup step's `composer install` (a task's worktree
has no vendor/); a composer `test` script, the project's own entry point, comes first. A tool is chosen only by its own
configuration file or folder: `.rspec` or `spec/` for RSpec, `.rubocop.yml` for RuboCop, `phpunit.xml` for
PHPUnit, `phpstan.neon` for PHPStan ...
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pm_agent.preflight._candidates import Candidate, Finding, Slot, read_manifest
from pm_agent.preflight._probe import Probe


def _first(repo: Path, *names: str) -> str | None:
    return next((name for name in names if (repo / name).exists()), None)


def detect_ruby(probe: Probe) -> Finding | None:
    """`bundle exec rspec` or the Rakefile's/Rails' tests, `bundle exec rubocop` (or standardrb); None without a
    Gemfile."""
    repo = probe.repo
    if not (repo / "Gemfile").is_file():
        return None
    missing = None if probe.which("bundle") else "not installed: bundle is not on PATH (gem install bundler)"
    gemfile = (repo / "Gemfile").read_text(encoding="utf-8", errors="replace")
    found = Finding()
    specs = _first(repo, ".rspec", "spec")
    rakefile = _first(repo, "Rakefile", "rakefile", "Rakefile.rb")
    rake = (repo / rakefile).read_text(encoding="utf-8", errors="replace") if rakefile else ""
    if specs is not None:
        compiled = _rake_builds_first(rake, "spec", _RSPEC_TASK, "`bundle exec rspec`")
        if compiled is not None:
            found.candidates.append(Candidate(Slot.TEST, f"bundle exec rake {compiled[0]}", compiled[1], missing))
        found.candidates.append(Candidate(Slot.TEST, "bundle exec rspec", f"Gemfile and {specs}: RSpec", missing))
    if (repo / "bin" / "rails").is_file() and (repo / "test").is_dir():
        found.candidates.append(Candidate(Slot.TEST, "bin/rails test", "bin/rails and test/: Rails' test runner"))
    elif (repo / "test").is_dir() and rakefile:
        task, why = _rake_builds_first(rake, "test", _TEST_TASK, "") or ("test", "")
        why = why or "Rakefile and test/: the rake test task (minitest, test-unit)"
        found.candidates.append(Candidate(Slot.TEST, f"bundle exec rake {task}", why, missing))
    if (repo / ".rubocop.yml").is_file():
        found.candidates.append(Candidate(Slot.LINT, "bundle exec rubocop", ".rubocop.yml: RuboCop", missing))
    elif "'standard'" in gemfile or '"standard"' in gemfile:
        found.candidates.append(Candidate(Slot.LINT, "bundle exec standardrb", "Gemfile: the standard gem", missing))
    if (repo / "sorbet").is_dir():
        found.candidates.append(Candidate(Slot.TYPECHECK, "bundle exec srb tc", "sorbet/: Sorbet", missing))
    elif (repo / "Steepfile").is_file():
        found.candidates.append(Candidate(Slot.TYPECHECK, "bundle exec steep check", "Steepfile: Steep", missing))
    return found


# `task :spec => :compile`, `task spec: [:compile]`, `task "spec" => ...`: the task's prerequisites.
_PREREQUISITES = (
    r"""^[ \t]*task[ \t(]+(?::{name}[ \t]*=>|["']{name}["'][ \t]*=>|{name}:)[ \t]*([^\n#]*?)(?:[ \t]+do\b.*)?$"""
)
# The rake task that runs the specs or tests: RSpec's (named :spec by default), Rake::TestTask's (:test).
_RSPEC_TASK = re.compile(r"RSpec::Core::RakeTask\.new(?![ \t]*\([ \t]*:(?!spec\b))")
_TEST_TASK = re.compile(r"Rake::TestTask\.new(?![ \t]*\([ \t]*:(?!test\b))")
# rake-compiler: the C (or Java) extension is built by `rake compile`, into a file git ignores.
_EXTENSION = re.compile(r"Rake::((?:Java)?ExtensionTask)\.new")
_NOT_NARROWED = "; pm-agent cannot narrow a rake task to a task's test files: each test gate runs the whole suite"


def _rake_builds_first(rakefile: str, name: str, runner: re.Pattern[str], bare: str) -> tuple[str, str] | None:
    """(rake's arguments, why) when the Rakefile's `name` task builds something first (msgpack-ruby's `task :spec =>
    :compile`: a clean checkout has no compiled extension, which `bundle exec rspec` cannot load), or the project
    compiles an extension with rake-compiler (`rake compile <name>`); None otherwise. `bare`: the command the reason
    says would skip the prerequisites ("": none)."""
    defined = runner.search(rakefile) is not None
    prerequisites = re.search(_PREREQUISITES.format(name=name), rakefile, re.MULTILINE)
    extension = _EXTENSION.search(rakefile)
    # A spec task with prerequisites and no runner (`task :spec => :compile` alone) would compile and test nothing.
    if prerequisites is not None and defined:
        line = rakefile.count("\n", 0, prerequisites.start()) + 1
        first = prerequisites.group(1).strip()
        why = f"Rakefile line {line}: `{prerequisites.group(0).strip()}`: the Rakefile's {name} task runs {first} first"
        return name, why + (f", which {bare} skips" if bare else "") + _NOT_NARROWED
    if defined and extension is not None:
        why = f"Rakefile: rake-compiler's {extension.group(1)} builds the extension the {name}s load"
        return (
            f"compile {name}",
            f"{why}, which `rake {name}` alone does not (a clean worktree has none){_NOT_NARROWED}",
        )
    return None


# PHP's tools by their configuration files: (slot, files, program, its arguments, the package that ships it, name).
PHP_TOOLS: tuple[tuple[Slot, tuple[str, ...], str, str, str, str], ...] = (
    (Slot.TEST, ("phpunit.xml", "phpunit.xml.dist"), "phpunit", "", "phpunit/phpunit", "PHPUnit"),
    (
        Slot.LINT,
        ("phpcs.xml", "phpcs.xml.dist", ".phpcs.xml", ".phpcs.xml.dist"),
        "phpcs",
        "",
        "squizlabs/php_codesniffer",
        "PHP_CodeSniffer",
    ),
    (
        Slot.LINT,
        (".php-cs-fixer.php", ".php-cs-fixer.dist.php"),
        "php-cs-fixer",
        " fix --dry-run --diff",
        "friendsofphp/php-cs-fixer",
        "PHP CS Fixer",
    ),
    (
        Slot.TYPECHECK,
        ("phpstan.neon", "phpstan.neon.dist", "phpstan.dist.neon"),
        "phpstan",
        " analyse --no-progress --error-format=raw",
        "phpstan/phpstan",
        "PHPStan",
    ),
    (Slot.TYPECHECK, ("psalm.xml", "psalm.xml.dist"), "psalm", " --no-progress", "vimeo/psalm", "Psalm"),
)
# A task's worktree is a fresh checkout: vendor/ (ignored) is not in it, and a link to the repository's own would
# autoload the repository's classes, not the task's. So each worktree installs its own first (from composer's cache),
# once, before its agent (which runs the tests too) and its gates: the environment's setup step.
COMPOSER_INSTALL = "composer install --no-interaction --no-progress"


def detect_php(probe: Probe) -> Finding | None:
    """`composer install` as the setup step; composer's test script, else the configured PHPUnit (Pest when
    required), PHP_CodeSniffer or PHP CS Fixer, PHPStan or Psalm; None without composer.json."""
    repo = probe.repo
    path = repo / "composer.json"
    if not path.is_file():
        return None
    found = Finding()
    data = read_manifest(path, found) or {}  # a broken composer.json: its configured tools are still found
    scripts = _mapping(data.get("scripts"))
    required = {**_mapping(data.get("require")), **_mapping(data.get("require-dev"))}
    composer = None if probe.which("composer") else "not installed: composer is not on PATH"
    why = "composer.json: a worktree has no vendor/ (git ignores it) until composer installs one, from its cache"
    found.candidates.append(Candidate(Slot.SETUP, COMPOSER_INSTALL, why, composer))
    if "test" in scripts:
        why = "composer.json scripts.test"
        found.candidates.append(Candidate(Slot.TEST, "composer test", why, composer))
    for slot, files, program, args, package, what in PHP_TOOLS:
        config = _first(repo, *files)
        if config is None:
            continue
        if program == "phpunit" and "pestphp/pest" in required:
            program, package, what = "pest", "pestphp/pest", "Pest"
        if package in required:
            command, where, problem = f"vendor/bin/{program}", f"{package} in composer.json", composer
        else:
            on_path = probe.which(program) is not None
            command, where = program, f"{program} on PATH ({package} is not in composer.json)"
            problem = composer or (
                None if on_path else f"not installed: {package} is neither in composer.json nor {program} on PATH"
            )
        reason = f"{config}: {what}, {where}"
        found.candidates.append(Candidate(slot, f"{command}{args}", reason, problem))
    return found


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


__all__ = ["detect_php", "detect_ruby"]
