"""Workload-specific rules that the declarative spec cannot state.

Most of a workload lives in spec/workloads/<name>.json. A workload that needs more
(a parameter with a command-line shorthand, a check across parameters, a method
that takes two worker runs per measurement) registers a module here.
"""

from collections.abc import Callable

from msgbench.workloads import fanin, socket

_HOOKS = {"fanin": fanin, "socket": socket}


def parse_value(workload: str, name: str, text: str):
    """A parameter value from its command-line text, or None to use the spec's type."""
    hook = _HOOKS.get(workload)
    return hook.parse_value(name, text) if hook else None


def check(workload: str, params: dict) -> None:
    """Raise spec.ParamError for combinations of parameters the workload refuses."""
    hook = _HOOKS.get(workload)
    if hook:
        hook.check(params)


def measure(workload: str, params: dict, run_once: Callable[[dict], object]):
    """One measurement: usually one worker run; a workload may combine several."""
    hook = _HOOKS.get(workload)
    return hook.measure(params, run_once) if hook else run_once(params)
