"""msgbench target "reference": the error the worker reports, typed access to the request's params
and the variant's options, shared by worker.py (socket) and pubsub_tools.py (pubsub). Standard
library only.

The harness validated the params against the workload spec and filled in every default
(spec/README.md): nothing here checks a range. A field that is absent is a harness bug,
reported as internal; what a tool cannot do is each tool's own `unsupported`."""

import ast
import dataclasses
import functools
import json
import operator
from pathlib import Path


class Failure(Exception):
    """What the worker reports as an error line: kind is the protocol's error kind."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


def read_params(cls, raw):
    """The dataclass cls built from the request's params, each field by its name."""
    fields = dataclasses.fields(cls)
    # A field with a default is a parameter the spec omits at its default (omit_at_default).
    missing = [f.name for f in fields if (not isinstance(raw, dict) or f.name not in raw)
               and f.default is dataclasses.MISSING]
    if missing:
        raise Failure("internal", f"params.{missing[0]} is absent (the harness sends every parameter): "
                                  f"params = {json.dumps(raw)[:200]}")
    return cls(**{f.name: raw[f.name] for f in fields if f.name in raw})


def tool_option(request: dict, tools, others: tuple[str, ...] = ()) -> str:
    """The variant's `tool` option (target.toml), one of tools; any option but these and others is unknown."""
    options = request.get("options")
    if not isinstance(options, dict):
        raise Failure("internal", "the request has no options object (spec/README.md, \"The worker protocol\")")
    unknown = sorted(set(options) - {"tool", *others})
    if unknown:
        raise Failure("internal", f"unknown option {unknown[0]} (known here: {', '.join(('tool', *others))})")
    if options.get("tool") not in tools:
        raise Failure("internal", f"option tool = {json.dumps(options.get('tool'))} is not one of "
                                  f"{', '.join(tools)} (target.toml)")
    return options["tool"]


# The workloads' specs, copied here by make build: a folder deployed to a host (rsync) has no ../../spec.
SPEC_DIR = Path(__file__).resolve().parent / "spec"
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_COMPARISONS = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
                ast.Eq: operator.eq, ast.NotEq: operator.ne}


@functools.cache
def _time_limit_expression(workload: str) -> ast.expr:
    path = SPEC_DIR / f"{workload}.json"
    try:
        return ast.parse(json.loads(path.read_text())["time_limit_s"], mode="eval").body
    except (OSError, ValueError, KeyError, SyntaxError) as e:
        raise Failure("internal", f"cannot read time_limit_s from {path} ({e}): run make build") from e


def time_limit_s(workload: str, params: dict) -> float:
    """The harness's time limit for these params, from the workload's spec (its time_limit_s):
    the worker gives its tools a little less, so that it answers before the harness stops it."""
    return _arithmetic(_time_limit_expression(workload), params)


def _arithmetic(node: ast.expr, names: dict) -> float:
    """Numbers, params, + - * / and one comparison's `a if test else b` (the socket and pubsub specs'
    time limits); anything else is an error."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_arithmetic(node.left, names), _arithmetic(node.right, names))
    if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 \
            and type(node.test.ops[0]) in _COMPARISONS:  # socket's "... / rate if rate > 0 else 0"
        test = node.test
        held = _COMPARISONS[type(test.ops[0])](_arithmetic(test.left, names), _arithmetic(test.comparators[0], names))
        return _arithmetic(node.body if held else node.orelse, names)
    raise Failure("internal", f"time_limit_s: {ast.unparse(node)} is not arithmetic over the params "
                              f"{', '.join(sorted(names))} (targets/reference/params.py)")
