"""The workload plug-ins' two halves (docs/architecture.md): what the runner and the
command line know of a workload comes from its plug-ins, and the plug-ins describe
workloads the spec has."""

import ast
from pathlib import Path

import pytest

from msgbench import capacity_cli, cli, cliargs
from msgbench.core import spec
from msgbench.hosts import placement
from msgbench.running import capacity_run, runner
from msgbench.running import workloads as workload_runs
from msgbench.views import workloads
from msgbench.workers import targets

PACKAGE = Path(cli.__file__).parent
PLUG_INS = (PACKAGE / "running" / "workloads", PACKAGE / "views" / "workloads")
# Modules outside the plug-in packages that may branch on a workload's name, and why.
# Exact: an entry that no longer branches fails too, so the list cannot go stale.
BRANCHING_ALLOWED = {
    # The chat plug-in's half in the workers layer (the server kind's commands, its
    # target.toml keys): the plug-ins sit above the workers and hosts that start servers.
    "workers/chat_server.py": "the chat server kind is chat's (variants that run chat, server=ws)",
    # The OTP suite's text is the fanin seed's own format: it has no other workload.
    "views/formats/otp.py": "the OTP suite's format holds fanin alone",
    # Not the workload: a chart marker shape (an open circle) called "ring".
    "views/report/png.py": "the 'ring' marker shape, not the ring workload",
}


@pytest.mark.parametrize("module", [runner, cli, capacity_cli, cliargs, capacity_run, targets, placement],
                         ids=lambda m: m.__name__)
def test_the_runner_and_the_command_line_name_no_workload(module):
    names = set(spec.workloads())
    tree = ast.parse(Path(module.__file__).read_text())
    named = [(node.lineno, node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and node.value in names]
    assert not named, f"{module.__name__} names workloads (line, name): {named}; ask its plug-in instead"


def test_every_plug_in_is_of_a_workload_the_spec_has():
    assert set(workload_runs.PLUGINS) <= set(spec.workloads())
    assert set(workloads.PLUGINS) <= set(spec.workloads())


def test_each_run_plug_in_roles_are_placement_kinds_and_only_its_own_roles_spread():
    for plugin in workload_runs.PLUGINS.values():
        assert set(plugin.roles.values()) <= {placement.WORKER, placement.PEER, placement.SERVICE}, plugin.name
        assert set(plugin.spread) <= set(plugin.roles), plugin.name


def test_a_server_kind_applies_by_its_params_only():
    assert workload_runs.server_kind("chat", {"server": "ws"}) is not None
    assert workload_runs.server_kind("chat", {"server": "none"}) is None
    assert workload_runs.server_kind("ring", {"server": "ws"}) is None
    assert workload_runs.plugin("no-such-workload").server_kind is None


def _compared_names(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """Workload names a module branches on: a string constant equal to one compared with
    (==, !=, in, not in, also inside a tuple, list or set compared with), a dict key
    (a table by workload) or a match-case value. Messages and docstrings that mention a
    workload are none of these."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        candidates = []
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                candidates.append(operand)
                if isinstance(operand, (ast.Tuple, ast.List, ast.Set)):
                    candidates += operand.elts
        elif isinstance(node, ast.Dict):
            candidates += [key for key in node.keys if key is not None]
        elif isinstance(node, ast.MatchValue):
            candidates.append(node.value)
        found += [(c.lineno, c.value) for c in candidates if isinstance(c, ast.Constant) and c.value in names]
    return found


def test_no_module_outside_the_plug_ins_branches_on_a_workload_name():
    """What a workload does beyond its spec is its plug-ins' (issue 32): no other module
    compares with a workload's name or keeps a table by it, but the few allowed above."""
    names = set(spec.workloads())
    branching = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(path.is_relative_to(folder) for folder in PLUG_INS):
            continue
        found = _compared_names(path, names)
        if found:
            branching[path.relative_to(PACKAGE).as_posix()] = found
    unexplained = {module: found for module, found in branching.items() if module not in BRANCHING_ALLOWED}
    assert not unexplained, f"modules branching on workload names (line, name): {unexplained}; ask a plug-in"
    stale = sorted(set(BRANCHING_ALLOWED) - set(branching))
    assert not stale, f"allowed to branch on a workload name but no longer does: {stale}; drop them from the list"


def test_the_check_sees_a_comparison_a_table_and_a_match(tmp_path):
    source = tmp_path / "m.py"
    source.write_text('if w == "chat" or w in ("x", "pubsub"):\n    pass\nT = {"socket": 1}\n'
                      'match w:\n    case "ring":\n        pass\nsay = f"no {w}: chat"\n"""fanin"""\n')
    assert sorted(_compared_names(source, set(spec.workloads()))) == [(1, "chat"), (1, "pubsub"), (3, "socket"),
                                                                      (5, "ring")]
