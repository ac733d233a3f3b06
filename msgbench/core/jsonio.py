"""JSON in and out, strictly: no NaN or infinity either way, no stack overflow on input.

Python's json module reads `NaN`, `Infinity` and `1e999` (as inf) and writes them
back as bare `NaN`, which is not JSON: a worker's result, an import or a request to
the results page carrying one would be stored, and then break every reader. Every
JSON msgbench reads from outside goes through loads(); every JSON it writes through
dumps().
"""

import json
import math


class JSONError(ValueError):
    """Text that is not strict JSON, said in one line; reason without the place, and the
    place (1-based line and column) where the parser knows it."""

    def __init__(self, message: str, reason: str | None = None, line: int | None = None,
                 column: int | None = None):
        super().__init__(message)
        self.reason, self.line, self.column = reason or message, line, column


def refuse_constant(name: str):
    raise JSONError(f"{name} is not a number JSON allows")


def finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JSONError(f"{text} is too large a number (it would be infinite)")
    return value


def loads(text: str | bytes):
    """The JSON value of text, or JSONError naming what is wrong and where."""
    try:
        return json.loads(text, parse_constant=refuse_constant, parse_float=finite_float)
    except json.JSONDecodeError as exc:
        raise JSONError(f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                        exc.msg, exc.lineno, exc.colno) from None
    except RecursionError:
        raise JSONError("nested too deeply (arrays or objects within each other)") from None
    except UnicodeDecodeError as exc:
        raise JSONError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None


def dumps(value, **kwargs) -> str:
    """JSON text; a NaN or infinity anywhere is a ValueError, never bare `NaN` in a file."""
    return json.dumps(value, allow_nan=False, **kwargs)
