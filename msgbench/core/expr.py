"""A tiny, safe evaluator for the expressions in the workload specs.

Specs state verification rules ("hops == n * m"), cross-parameter rules
("size <= total_bytes"), sizes ("senders + 1") and every derived metric
("n * m / (pass_wall_ns / 1e9)") as text, so that they stay language-neutral data
and no worker computes them. Accepted: numbers and strings, names, arithmetic,
comparisons, `and`/`or`/`not`, `a if cond else b`, and a fixed set of functions:

- min, max, abs, floor, ceil: on numbers;
- sum(E), mean(E), count(E): E is evaluated once per element of the lists it names
  (per socket, per receiver; the lists must be of one length) and the results added,
  averaged or counted. A list is usable only inside these;
- percentile(H, q) and hist_count(H): on a histogram (msgbench.core.histogram).

Anything else (attributes, subscripts, calls of anything else, lambdas) is an error.
"""

import ast
import math
import operator
from collections.abc import Mapping

from msgbench.core import histogram

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_SCALAR_FUNCTIONS = {"min": min, "max": max, "abs": abs, "floor": math.floor, "ceil": math.ceil}
_LIST_FUNCTIONS = {"sum", "mean", "count"}
_HISTOGRAM_FUNCTIONS = {"percentile", "hist_count"}
FUNCTIONS = frozenset(_SCALAR_FUNCTIONS) | _LIST_FUNCTIONS | _HISTOGRAM_FUNCTIONS


class ExpressionError(ValueError):
    pass


class Histogram(dict):
    """A histogram's {bucket: count}, as a value an expression can name."""


def names_in(expression: str) -> set[str]:
    """The variable names an expression refers to (function names excluded)."""
    tree = _parse(expression)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and id(node) not in called}


def evaluate(expression: str, env: Mapping[str, object]):
    value = _Evaluator(env, expression).eval(_parse(expression).body)
    if isinstance(value, (list, Histogram)):
        raise ExpressionError(f"{expression!r}: the result is a list; use sum(), mean() or count()")
    return value


def _parse(expression: str) -> ast.Expression:
    try:
        return ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse expression {expression!r}: {exc.msg}") from exc


class _Evaluator:
    def __init__(self, env: Mapping[str, object], source: str):
        self.env, self.source = env, source

    def fail(self, why: str) -> ExpressionError:
        return ExpressionError(f"{self.source!r}: {why}")

    def eval(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise self.fail(f"unknown name {node.id!r}")
            return self.env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.number(node.left), self.number(node.right)
            try:
                return _BINARY[type(node.op)](left, right)
            except ZeroDivisionError:
                raise self.fail(f"division by zero in {ast.unparse(node)!r}") from None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.number(node.operand)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.eval(node.operand)
        if isinstance(node, ast.BoolOp):
            values = (self.eval(value) for value in node.values)
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.IfExp):
            return self.eval(node.body) if self.eval(node.test) else self.eval(node.orelse)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            return self.call(node)
        raise self.fail(f"unsupported syntax {ast.dump(node)[:60]}")

    def number(self, node):
        value = self.eval(node)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"{ast.unparse(node)!r} is {_kind(value)}, not a number")
        return value

    def compare(self, node: ast.Compare) -> bool:
        left = self.eval(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _COMPARE:
                raise self.fail(f"unsupported comparison {type(op).__name__}")
            right = self.eval(right_node)
            if type(op) not in (ast.Eq, ast.NotEq) and (isinstance(left, str) or isinstance(right, str)):
                raise self.fail("strings compare only with == and !=")
            if isinstance(left, (list, Histogram)) or isinstance(right, (list, Histogram)):
                raise self.fail("a list compares only inside sum(), mean() or count()")
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def call(self, node: ast.Call):
        name, args = node.func.id, node.args
        if name in _SCALAR_FUNCTIONS:
            if name in ("min", "max") and len(args) < 2:
                raise self.fail(f"{name}() takes two or more numbers")
            if name in ("abs", "floor", "ceil") and len(args) != 1:
                raise self.fail(f"{name}() takes one number")
            return _SCALAR_FUNCTIONS[name](*(self.number(a) for a in args))
        if name in _LIST_FUNCTIONS:
            if len(args) != 1:
                raise self.fail(f"{name}() takes one expression")
            values = self.mapped(args[0])
            if name == "count":
                return len(values)
            if name == "mean" and not values:
                raise self.fail(f"mean() of no values in {ast.unparse(node)!r}")
            return sum(values) if name == "sum" else sum(values) / len(values)
        if name in _HISTOGRAM_FUNCTIONS:
            hist = self.eval(args[0]) if args else None
            if not isinstance(hist, Histogram):
                raise self.fail(f"{name}() takes a histogram first, got {_kind(hist)}")
            if name == "hist_count":
                if len(args) != 1:
                    raise self.fail("hist_count() takes one histogram")
                return histogram.total(hist)
            if len(args) != 2:
                raise self.fail("percentile() takes a histogram and a percentile from 0 to 100")
            return histogram.percentile(hist, self.number(args[1]))
        raise self.fail(f"unknown function {name!r}; known: {', '.join(sorted(FUNCTIONS))}")

    def mapped(self, node) -> list:
        """The expression evaluated once per element of the lists it names."""
        lists = {n: self.env[n] for n in _free_names(node) if isinstance(self.env.get(n), list)}
        lengths = {len(v) for v in lists.values()}
        if len(lengths) > 1:
            shown = ", ".join(f"{n} has {len(v)}" for n, v in sorted(lists.items()))
            raise self.fail(f"the lists in {ast.unparse(node)!r} differ in length ({shown})")
        if not lists:
            raise self.fail(f"{ast.unparse(node)!r} names no list")
        results = []
        for i in range(lengths.pop()):
            element = _Evaluator({**self.env, **{n: v[i] for n, v in lists.items()}}, self.source)
            value = element.eval(node)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(f"{ast.unparse(node)!r} gives {_kind(value)}, not a number")
            results.append(value)
        return results


def _free_names(node) -> set[str]:
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called}


def _kind(value) -> str:
    if isinstance(value, Histogram):
        return "a histogram"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, bool):
        return "a boolean"
    return type(value).__name__
