"""Values with their units, as people read them in a table: 41.2 µs, 880 ms, 1.23M.

A metric's unit is in its name (docs/architecture.md): _us, _ms, _bytes, _per_s. A
headline column (workloads/plugin.py) puts a fixed unit in its header (`msg/s`,
`bandwidth MB/s`) and a time's unit, which varies from row to row, in each cell.
"""

import math


def number(value: float | None) -> str:
    """12.3M, 456k, 7.89, 0.0123: three significant digits and an SI suffix; never 1e+03
    (999.9 rounds to 1k)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    value = _three_digits(value)
    magnitude = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            return f"{_three_digits(value / limit):g}{suffix}"
    return _plain(value)


def _three_digits(value: float) -> float:
    """value rounded to three significant digits (999.9 is 1000: then it takes the next unit)."""
    return float(f"{value:.3g}")


def _plain(value: float) -> str:
    """A number under 1000 with three significant digits, never in exponent form."""
    text = f"{value:.3g}"
    if "e" not in text:
        return text
    return f"{value:.{max(0, 2 - math.floor(math.log10(abs(value))))}f}" if value else "0"


def duration_us(value: float) -> str:
    """A time given in µs, in the unit that keeps it short: 850 ns, 41.2 µs, 880 ms, 3.2 s
    (999.9 µs is 1 ms, never 1e+03 µs)."""
    value = _three_digits(value)
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{number(value / 1e6)} s" if magnitude < 1e9 else f"{value / 1e6:,.0f} s"
    if magnitude >= 1e3:
        return f"{_plain(value / 1e3)} ms"
    if magnitude >= 1 or magnitude == 0:
        return f"{_plain(value)} µs"
    return f"{_plain(value * 1e3)} ns"


def megabytes(value: float) -> str:
    """Bytes as MB (10^6 bytes, as network figures are given): 41.2, 1,140."""
    megabytes = value / 1e6
    return f"{megabytes:,.0f}" if abs(_three_digits(megabytes)) >= 1000 else _plain(_three_digits(megabytes))


def of_metric(name: str, value: float) -> str:
    """A metric's value with the unit its name ends with."""
    if name.endswith("_us"):
        return duration_us(value)
    if name.endswith("_ms"):
        return duration_us(value * 1e3)
    if name.endswith("_bytes_per_s"):
        return f"{megabytes(value)} MB/s"
    if name.endswith("_bytes"):
        return f"{number(value)}B"
    if name.endswith("_per_s"):
        return f"{number(value)}/s"
    if name.endswith("_ratio"):
        return f"{value:.1%}"
    return number(value)
