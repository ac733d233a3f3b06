"""Values with their units, as people read them in a table: 41.2 µs, 312 MB/s, 1.23M msg/s.

A metric's unit is in its name (docs/architecture.md): _us, _ms, _bytes, _per_s. A
headline column (workloads/plugin.py) may say more, e.g. that bytes per second read
best as MB/s.
"""

import math


def number(value: float | None) -> str:
    """12.3M, 456k, 7.89, 0.0123: three significant digits and an SI suffix."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    magnitude = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def duration_us(value: float) -> str:
    """A time given in µs, in the unit that keeps it short: 850 ns, 41.2 µs, 880 ms, 3.2 s."""
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:.3g} s"
    if magnitude >= 1e3:
        return f"{value / 1e3:.3g} ms"
    if magnitude >= 1 or magnitude == 0:
        return f"{value:.3g} µs"
    return f"{value * 1e3:.3g} ns"


def megabytes_per_s(value: float) -> str:
    """Bytes per second as MB/s (10^6 bytes, as network figures are given): 41.2 MB/s, 1,140 MB/s."""
    megabytes = value / 1e6
    return f"{megabytes:,.0f} MB/s" if abs(megabytes) >= 1000 else f"{megabytes:.3g} MB/s"


def rate(unit: str):
    """A formatter for so many `unit` per second: rate("msg")(1.23e6) == "1.23M msg/s"."""
    return lambda value: f"{number(value)} {unit}/s"


def of_metric(name: str, value: float) -> str:
    """A metric's value with the unit its name ends with."""
    if name.endswith("_us"):
        return duration_us(value)
    if name.endswith("_ms"):
        return duration_us(value * 1e3)
    if name.endswith("_bytes_per_s"):
        return megabytes_per_s(value)
    if name.endswith("_bytes"):
        return f"{number(value)}B"
    if name.endswith("_per_s"):
        return f"{number(value)}/s"
    if name.endswith("_ratio"):
        return f"{value:.1%}"
    return number(value)
