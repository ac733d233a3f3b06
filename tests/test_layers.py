"""The workload plug-ins' two halves (docs/architecture.md): what the runner and the
command line know of a workload comes from its plug-ins, and the plug-ins describe
workloads the spec has."""

import ast
from pathlib import Path

import pytest

from msgbench import cli
from msgbench.core import spec
from msgbench.hosts import placement
from msgbench.running import runner
from msgbench.running import workloads as workload_runs
from msgbench.views import workloads


@pytest.mark.parametrize("module", [runner, cli], ids=lambda m: m.__name__)
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
