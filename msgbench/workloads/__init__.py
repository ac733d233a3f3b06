"""Workload-specific rules that the declarative spec cannot state.

Most of a workload lives in spec/workloads/<name>.json. A workload that needs more
(a parameter with a command-line shorthand, a structural check the spec's
"requires" expressions cannot state, a method that takes two worker runs per
measurement) registers a module here defining any of parse_value(name, text),
check(params) and measure(params, run_once).
"""

from collections.abc import Callable

from msgbench.workloads import fanin

_HOOKS = {"fanin": fanin}


def _hook(workload: str, name: str):
    """The workload module's function of that name, if it defines one."""
    return getattr(_HOOKS.get(workload), name, None)


def parse_value(workload: str, name: str, text: str):
    """A parameter value from its command-line text, or None to use the spec's type."""
    hook = _hook(workload, "parse_value")
    return hook(name, text) if hook else None


def check(workload: str, params: dict) -> None:
    """Raise spec.ParamError for combinations of parameters the workload refuses."""
    hook = _hook(workload, "check")
    if hook:
        hook(params)


def measure(workload: str, params: dict, run_once: Callable[[dict], object]):
    """One measurement: usually one worker run; a workload may combine several."""
    hook = _hook(workload, "measure")
    return hook(params, run_once) if hook else run_once(params)
