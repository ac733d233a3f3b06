import pytest

from msgbench import expr


def test_arithmetic_and_comparisons():
    env = {"n": 1000, "m": 10, "hops": 10000}
    assert expr.evaluate("hops == n * m", env) is True
    assert expr.evaluate("hops == n * m + 1", env) is False
    assert expr.evaluate("n + 1", env) == 1001
    assert expr.evaluate("0 < m <= 10 and not n < 5", env) is True


def test_names_in():
    assert expr.names_in("received_message == sent_message") == {"received_message", "sent_message"}


@pytest.mark.parametrize("source", ["__import__('os')", "n.real", "[1, 2]", "lambda: 1", "n if m else 1"])
def test_refuses_anything_but_arithmetic(source):
    with pytest.raises(expr.ExpressionError):
        expr.evaluate(source, {"n": 1, "m": 1})


def test_unknown_name_is_named():
    with pytest.raises(expr.ExpressionError, match="'x'"):
        expr.evaluate("x + 1", {})
