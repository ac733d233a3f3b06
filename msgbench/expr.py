"""A tiny, safe evaluator for the expressions in the workload specs.

Specs state verification rules ("hops == n * m") and sizes ("senders + 1") as
text so that they stay language-neutral data. Only arithmetic, comparisons,
boolean operators, names and numbers are accepted; anything else is an error.
"""

import ast
import operator
from collections.abc import Mapping

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


class ExpressionError(ValueError):
    pass


def names_in(expression: str) -> set[str]:
    """The variable names an expression refers to."""
    tree = _parse(expression)
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def evaluate(expression: str, env: Mapping[str, object]):
    return _eval(_parse(expression).body, env, expression)


def _parse(expression: str) -> ast.Expression:
    try:
        return ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse expression {expression!r}: {exc.msg}") from exc


def _eval(node, env, source):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ExpressionError(f"{source!r}: unknown name {node.id!r}")
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, env, source), _eval(node.right, env, source))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env, source)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, env, source)
    if isinstance(node, ast.BoolOp):
        values = (_eval(value, env, source) for value in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, source)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _COMPARE:
                break
            right = _eval(right_node, env, source)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        else:
            return True
    raise ExpressionError(f"{source!r}: unsupported syntax {ast.dump(node)[:60]}")
