import pytest

from msgbench.core import expr


def test_arithmetic_and_comparisons():
    env = {"n": 1000, "m": 10, "hops": 10000}
    assert expr.evaluate("hops == n * m", env) is True
    assert expr.evaluate("hops == n * m + 1", env) is False
    assert expr.evaluate("n + 1", env) == 1001
    assert expr.evaluate("0 < m <= 10 and not n < 5", env) is True


def test_names_in():
    assert expr.names_in("received_message == sent_message") == {"received_message", "sent_message"}


@pytest.mark.parametrize("source", ["__import__('os')", "n.real", "[1, 2]", "lambda: 1", "open('x')", "n[0]",
                                    "f'{n}'", "min(n, key=abs)", "sum(1)", "True"])
def test_refuses_anything_but_the_spec_language(source):
    with pytest.raises(expr.ExpressionError):
        expr.evaluate(source, {"n": 1, "m": 1})


def test_unknown_name_is_named():
    with pytest.raises(expr.ExpressionError, match="'x'"):
        expr.evaluate("x + 1", {})


def test_strings_and_conditionals():
    env = {"method": "otp", "duration_ms": 1000, "send_ns": 5_000_000}
    assert expr.evaluate("duration_ms if method == 'otp' else send_ns / 1e6", env) == 1000
    assert expr.evaluate("duration_ms if method == 'otp' else send_ns / 1e6", env | {"method": "msgbench"}) == 5.0
    with pytest.raises(expr.ExpressionError, match="strings compare only"):
        expr.evaluate("method < 'x'", env)
    with pytest.raises(expr.ExpressionError, match="not a number"):
        expr.evaluate("method + 1", env)


def test_scalar_functions():
    env = {"a": -2.5, "b": 7}
    assert expr.evaluate("min(a, b)", env) == -2.5
    assert expr.evaluate("max(a, b, 9)", env) == 9
    assert expr.evaluate("abs(a) + floor(2.7) + ceil(2.1)", env) == 2.5 + 2 + 3
    with pytest.raises(expr.ExpressionError, match="two or more"):
        expr.evaluate("min(a)", env)


def test_list_functions_map_element_by_element():
    env = {"got": [10, 1, 30], "first": [0, 5, 10], "last": [1_000_000_000, 5, 2_000_000_000], "k": 2}
    rate = "got / ((last - first) / 1e9) if got >= 2 and last > first else 0"
    assert expr.evaluate(f"mean({rate})", env) == pytest.approx((10 + 0 + 30 / 1.99999999) / 3)
    assert expr.evaluate("sum(got * k)", env) == 82
    assert expr.evaluate("count(got)", env) == 3
    assert expr.evaluate("mean(got) / 1e3", env) == pytest.approx(41 / 3 / 1e3)


def test_lists_are_refused_outside_list_functions_and_must_agree_in_length():
    env = {"a": [1, 2], "b": [1, 2, 3]}
    with pytest.raises(expr.ExpressionError, match="not a number"):
        expr.evaluate("a * 2", env)
    with pytest.raises(expr.ExpressionError, match="differ in length"):
        expr.evaluate("sum(a + b)", env)
    with pytest.raises(expr.ExpressionError, match="mean\\(\\) of no values"):
        expr.evaluate("mean(a)", {"a": []})


def test_histogram_functions():
    h = expr.Histogram({100: 3, 200: 1})
    assert expr.evaluate("hist_count(h)", {"h": h}) == 4
    assert expr.evaluate("percentile(h, 50)", {"h": h}) == 100
    with pytest.raises(expr.ExpressionError, match="takes a histogram"):
        expr.evaluate("percentile(n, 50)", {"n": 5})


def test_division_by_zero_is_named():
    with pytest.raises(expr.ExpressionError, match="division by zero"):
        expr.evaluate("n / (m - 1)", {"n": 1, "m": 1})


def test_function_names_are_not_variables():
    assert expr.names_in("max(lost, 0) / mean(got)") == {"lost", "got"}
