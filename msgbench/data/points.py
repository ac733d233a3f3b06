"""What makes a point the same point, and how its parameters read as text.

One key and one text form for every part of msgbench: the summary of a run, the
terminal table, `compare` (the same point of two runs), the report and the page.
"""

import json


def canonical(value: object) -> str:
    """A stable text form of a parameter value or a set of them, for keys and grouping:
    JSON with sorted keys and no spaces (1 and 1.0 stay apart, as the spec's types do)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def point_key(m: dict) -> tuple:
    """Measurements (or summaries) of one point share workload, scenario, target, build,
    variant and every parameter."""
    return (m["workload"], m["scenario"], m["target"], m.get("build") or "", m["variant"], canonical(m["params"]))


def same_point_key(m: dict) -> tuple:
    """The key under which the same point of two runs matches: as point_key without the
    scenario's name, which a suite may have renamed between the runs."""
    return (m["workload"], m["target"], m.get("build") or "", m["variant"], canonical(m["params"]))


def target_label(m: dict) -> str:
    """erlang/default, or erlang@otp25/default for a measurement on a named build."""
    build = m.get("build") or ""
    return f"{m['target']}{'@' + build if build else ''}/{m['variant']}"


def value_text(value: object) -> str:
    """A parameter value as a person reads it and the command line takes it: strings as
    they are, numbers as numbers, a fanin mix in its shorthand (50%exit_signal:10+50%message:10)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(_is_share(v) for v in value):
        return "+".join(f"{v['percent']:g}%{v['kind']}:{v['size']}" for v in value)
    return canonical(value)


def describe(params: dict, first: str | None = None) -> str:
    """`n=1000 m=10`: every parameter as name=value, the one named first (the swept one) first."""
    order = sorted(params, key=lambda k: k != first)
    return " ".join(f"{k}={value_text(params[k])}" for k in order)


def _is_share(value: object) -> bool:
    return isinstance(value, dict) and {"percent", "kind", "size"} <= value.keys()


UNKNOWN_MACHINE = "unknown machine (imported without its metadata)"


def machine_text(meta: dict) -> str:
    """The machine a run was measured on, in words: `Intel Xeon ..., 2 cores, 7.8 GiB,
    Linux 6.1`. What the run does not record is left out, and a run that records none
    of it (one imported from the OTP page's format) says so rather than `None`."""
    parts = []
    if meta.get("cpu_model"):
        parts.append(str(meta["cpu_model"]))
    if isinstance(meta.get("cores"), int):
        parts.append(f"{meta['cores']} cores")
    if isinstance(meta.get("memory_bytes"), (int, float)) and meta["memory_bytes"] > 0:
        parts.append(f"{meta['memory_bytes'] / 2**30:.1f} GiB")
    if meta.get("kernel"):
        parts.append(str(meta["kernel"]))
    return ", ".join(parts) or UNKNOWN_MACHINE


def machine_name(meta: dict) -> str:
    """The machine's host name for a list of runs, or `unknown` when the run does not say."""
    return str(meta.get("host") or "unknown")
