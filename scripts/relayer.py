#!/usr/bin/env python3
"""Moves msgbench/'s modules into the folders of their layers (docs/architecture.md) and
rewrites every mention of their old names: imports in msgbench/, tests/ and scripts/,
dotted names (monkeypatch targets, `python -m msgbench.testbed`, resources.files) and
file paths (msgbench/hosts.py) in the code, the docs, the spec and the project files.

    .venv/bin/python scripts/relayer.py   # from the checkout's root (ruff from the venv); then commit

It is a script, not a one-off edit, so that it can be run again on a tree that other
branches changed at the old paths (run it on the merged tree). It moves with `git mv`,
so history follows the files, then runs `ruff check --select I --fix` to put the
rewritten imports in order. A tree already moved (no msgbench/hosts.py) is left alone.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each layer: its folder's docstring and its modules (old name -> name in the layer).
# Top to bottom; each imports only from the layers below it (the import-linter
# contract in pyproject.toml says so, and `make test` checks it).
LAYERS = {
    "views": ("What msgbench shows: the run's summary for the terminal (screen, tables), figure\n"
              "descriptions, the HTML report, the results page, the file formats, the workloads'\n"
              "view-side plug-ins, the doctor's checks.",
              ["screen", "tables", "figures", "doctor", "report", "web", "formats", "workloads", "capacity_view"]),
    "running": ("How a run is planned and measured: the suites, the plan and the runner, calibration,\n"
                "builds, the brokers (services), the machine's limits, probe and tuning, the progress\n"
                "line, and the workloads' run-side plug-ins.",
                ["runner", "suites", "calibrate", "builds", "building", "services", "limits", "probe", "tuning",
                 "eta", "progress", "capacity", "capacity_run", ("workload_runs", "workloads")]),
    "hosts": ("Other machines: the host inventory and ssh (inventory), the remote end, placement of\n"
              "roles on hosts and namespaces, the test bed of namespaced hosts, and runs split over\n"
              "hosts (the chat server kind's).",
              [("hosts", "inventory"), "remote", "placement", "testbed", "chat_split"]),
    "data": ("What a run leaves: the store, summaries of measurements (results), points' keys and\n"
             "text, statistics, noise, verdicts, comparisons, trends, and the model the views draw from.",
             ["points", "store", "storefile", "results", "stats", "noise", "verdict", "compare", "trend", "model"]),
    "workers": ("The workers on this machine: the target registry, one worker run and its protocol,\n"
                "the supervisor and the process groups they run under, the CPUs they are placed on,\n"
                "the machine facts and the brokers' catalogue, the chat server kind's commands.",
                ["targets", "worker", "series", "procs", "groups", "cpus", "cpulist", "shield", "sysinfo", "catalogue",
                 "chat_server"]),
    "core": ("What every layer uses: the spec and its expressions, the histogram layout, strict\n"
             "JSON, units, paths, config files, interrupts, temporary folders, the terminal filter.",
             ["spec", "expr", "histogram", "jsonio", "units", "paths", "configfile", "interrupts", "tempdirs",
              "terminal"]),
}
# Old module (or package) under msgbench -> new dotted name under msgbench.
MOVES = {}
for layer, (_doc, members) in LAYERS.items():
    for member in members:
        old, new = member if isinstance(member, tuple) else (member, member)
        MOVES[old] = f"{layer}.{new}"

# The old names that are packages (folders), not modules.
PACKAGES = {"report", "web", "formats", "workloads", "workload_runs"}


def is_package_name(old: str) -> bool:
    return old in PACKAGES


# The layering check: import-linter's contracts, added to pyproject.toml and run by
# `make lint` (so by `make test` and CI).
CONTRACTS = """
# The harness's layers (docs/architecture.md): each imports only from those below it;
# `make lint` checks them with import-linter (lint-imports). Written by scripts/relayer.py.
[tool.importlinter]
root_package = "msgbench"

[[tool.importlinter.contracts]]
name = "msgbench's layers import only downward"
type = "layers"
containers = ["msgbench"]
layers = [
    "__main__",
    "cli : capacity_cli",
    "cliargs",
    "views",
    "running",
    "hosts",
    "data | workers",
    "core",
]

[[tool.importlinter.contracts]]
name = "the workloads' run-side and view-side plug-ins never import each other"
type = "independence"
modules = ["msgbench.running.workloads", "msgbench.views.workloads"]
"""
RUFF_LINE = "\t$(PY) -m ruff check msgbench tests scripts\n"
LINT_LINE = "\t$(dir $(PY))lint-imports\n"


def add_layering_check() -> None:
    pyproject = ROOT / "pyproject.toml"
    if "[tool.importlinter]" not in pyproject.read_text():
        pyproject.write_text(pyproject.read_text() + CONTRACTS)
    makefile = ROOT / "Makefile"
    text = makefile.read_text()
    if LINT_LINE not in text and RUFF_LINE in text:
        makefile.write_text(text.replace(RUFF_LINE, RUFF_LINE + LINT_LINE))


TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".txt", ".sh", ".cfg", ".ini", ".yml", ".yaml", ".js", ".html"}
TEXT_NAMES = {"Makefile", "run"}


def sh(*argv: str) -> str:
    return subprocess.run(argv, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def move_files() -> None:
    for layer, (doc, _members) in LAYERS.items():
        folder = ROOT / "msgbench" / layer
        folder.mkdir(exist_ok=True)
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text(f'"""{doc}\n\nLayer {layer} of docs/architecture.md."""\n')
            sh("git", "add", str(init))
    for old, new in MOVES.items():
        if is_package_name(old):  # file by file: the package may be there already (a merged tree)
            pairs = [(f, f.replace(f"msgbench/{old}/", f"msgbench/{new.replace('.', '/')}/", 1))
                     for f in sh("git", "ls-files", f"msgbench/{old}/").splitlines()]
        else:
            pairs = [(f"msgbench/{old}.py", f"msgbench/{new.replace('.', '/')}.py")]
        for source, target in pairs:
            if not (ROOT / source).exists():
                continue  # moved already
            if (ROOT / target).exists():
                raise SystemExit(f"relayer: both {source} and {target} exist: merge them by hand, then run again")
            (ROOT / target).parent.mkdir(parents=True, exist_ok=True)
            sh("git", "mv", source, target)


def dotted_pattern() -> re.Pattern:
    """msgbench.OLD as a whole name, longest first. An old name that became a package
    (hosts) does not match where it is followed by one of the package's new members, nor
    in `from msgbench.hosts import ...` (rewrite_package_imports tells old from new)."""
    alternatives = []
    for old in sorted(MOVES, key=len, reverse=True):
        children = package_children(old)
        guard = f"(?!\\.(?:{'|'.join(children)})\\b| import\\b)" if children else ""
        alternatives.append(f"{re.escape(old)}\\b{guard}")
    return re.compile(rf"(?<![\w.])msgbench\.({'|'.join(alternatives)})")


def package_children(old: str) -> list[str]:
    """The new members of the layer an old module's name became (hosts: inventory, ...)."""
    return [MOVES[o].split(".")[1] for o in MOVES if MOVES[o].split(".")[0] == old]


def path_pattern() -> re.Pattern:
    """msgbench/OLD.py for a module, msgbench/OLD/ or msgbench/OLD for a package."""
    alternatives = []
    for old in sorted(MOVES, key=len, reverse=True):
        alternatives.append(f"{re.escape(old)}(?=[/\\s`'\")\\],.:;]|$)" if is_package_name(old)
                            else f"{re.escape(old)}\\.py\\b")
    return re.compile(rf"(?<![\w./-])msgbench/({'|'.join(alternatives)})", re.M)


def rewrite_text(text: str) -> str:
    text = dotted_pattern().sub(lambda m: "msgbench." + MOVES[m.group(1).split(".")[0]], text)

    def path(m: re.Match) -> str:
        old = m.group(1)
        if old.endswith(".py"):
            return "msgbench/" + MOVES[old[:-3]].replace(".", "/") + ".py"
        return "msgbench/" + MOVES[old].replace(".", "/")
    return path_pattern().sub(path, text)


def rewrite_from_msgbench(text: str) -> str:
    """`from msgbench import a, b` -> one import per layer, each module by its old name;
    `from msgbench.hosts import Inventory` (the old module) -> from msgbench.hosts.inventory."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
            continue
        old_package = node.module.removeprefix("msgbench.") if node.module.startswith("msgbench.") else None
        children = package_children(old_package) if old_package in MOVES else []
        if children and any(a.name not in children for a in node.names):
            by_parent = {}
            for alias in node.names:
                parent = node.module if alias.name in children else f"msgbench.{MOVES[old_package]}"
                by_parent.setdefault(parent, []).append(
                    alias.name if not alias.asname else f"{alias.name} as {alias.asname}")
        elif node.module != "msgbench" or not any(a.name in MOVES for a in node.names):
            continue
        else:
            by_parent = from_msgbench(node)
        indent = " " * node.col_offset
        trailing = lines[node.end_lineno - 1][node.end_col_offset:]
        comment = trailing.rstrip("\n")  # a trailing comment (noqa) stays on each line
        new = f"{comment}\n{indent}".join(f"from {parent} import {', '.join(names)}"
                                           for parent, names in by_parent.items())
        edits.append((node.lineno, node.col_offset, node.end_lineno, new, trailing))
    for lineno, col, end_lineno, new, trailing in sorted(edits, reverse=True):
        head = lines[lineno - 1][:col]
        lines[lineno - 1:end_lineno] = [head + new + trailing]
    return "".join(lines)


def from_msgbench(node: ast.ImportFrom) -> dict[str, list[str]]:
    """`from msgbench import a, b as c`'s names by the package each now comes from."""
    by_parent: dict[str, list[str]] = {}
    for alias in node.names:
        if alias.name in MOVES:
            parent, _, name = f"msgbench.{MOVES[alias.name]}".rpartition(".")
            local = alias.asname or alias.name
            by_parent.setdefault(parent, []).append(name if local == name else f"{name} as {local}")
        else:
            by_parent.setdefault("msgbench", []).append(
                alias.name if not alias.asname else f"{alias.name} as {alias.asname}")
    return by_parent


def tracked_text_files() -> list[Path]:
    files = []
    for name in sh("git", "ls-files").splitlines():
        path = ROOT / name
        if name.startswith(("targets/", "kits/")) and not name.endswith(".md"):
            continue  # the workers' code names no harness module
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES):
            files.append(path)
    return files


def main() -> int:
    move_files()
    for path in tracked_text_files():
        if path == Path(__file__).resolve():
            continue
        text = path.read_text()
        new = rewrite_text(text)
        if path.suffix == ".py":
            new = rewrite_from_msgbench(new)
        if new != text:
            path.write_text(new)
    add_layering_check()
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "check", "--select", "I", "--fix", "-q", "msgbench", "tests", "scripts"], cwd=ROOT,
                   check=False)
    print("relayer: moved; check with: ruff check msgbench tests scripts; lint-imports; pytest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
