"""The README's claims hold: every recipe is a command msgbench accepts, and what it says
`make run` installs is what the Makefile's run does."""

import re
import shlex
from pathlib import Path

from msgbench.cli import _parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _recipes() -> list[list[str]]:
    block = README.split("## Recipes", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [shlex.split(line, comments=True)[1:] for line in block.splitlines() if line.startswith("msgbench ")]


def test_every_recipe_parses():
    recipes = _recipes()
    assert {r[0] for r in recipes} >= {"run", "check", "show"}
    for args in recipes:
        parsed = _parser().parse_args(args)
        assert parsed.handler.__name__ == f"cmd_{args[0]}"


def _rule(makefile: str, name: str) -> str:
    """A Makefile rule's text and that of the rules it depends on."""
    found = re.search(rf"^{name}:(.*)\n((?:\t.*\n)*)", makefile, re.M)
    return found.group(2) + "".join(_rule(makefile, dep) for dep in found.group(1).split())


def test_the_readme_says_make_run_installs_chromium_only_if_it_does():
    makefile = (ROOT / "Makefile").read_text()
    installs_chromium = "--test" in _rule(makefile, "run")  # install-deps.sh adds chromium with --test
    assert "--test" in _rule(makefile, "test")
    assert ("`make run` does not" in README) != installs_chromium
