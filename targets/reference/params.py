"""msgbench target "reference": the error the worker reports and the checking of a request's params,
shared by worker.py (socket) and pubsub_tools.py (pubsub). Standard library only."""

import json


class Failure(Exception):
    """What the worker reports as an error line: kind is the protocol's error kind."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class Ranges:
    """A workload's parameters, by name, and the values the spec accepts for each: integers from low to
    high (ints), numbers from low to high (numbers) or one of some strings (enums)."""

    def __init__(self, names: tuple[str, ...], ints: dict, numbers: dict | None = None, enums: dict | None = None):
        self.names, self.ints, self.numbers, self.enums = names, ints, numbers or {}, enums or {}

    def describe(self, name: str) -> str:
        if name in self.enums:
            return f"{name} must be one of {', '.join(self.enums[name])}"
        if name in self.numbers:
            low, high = self.numbers[name]
            return f"{name} must be a number from {low:g} to {high:,}"
        low, high = self.ints[name]
        return f"{name} must be an integer from {low:,} to {high:,}"

    def check_value(self, name: str, value):
        if name in self.enums:
            ok = isinstance(value, str) and value in self.enums[name]
        else:
            low, high = self.numbers.get(name) or self.ints[name]
            kinds = (int, float) if name in self.numbers else int
            # NaN and infinities fail the range check too.
            ok = isinstance(value, kinds) and not isinstance(value, bool) and low <= value <= high
        if not ok:
            raise Failure("bad_params", f"{name} = {json.dumps(value)} is out of range: {self.describe(name)}")
        return value

    def check(self, raw) -> dict:
        """The request's params, each checked against the spec's range (bad_params otherwise)."""
        if not isinstance(raw, dict):
            raise Failure("bad_params", f"params = {json.dumps(raw)} is not an object of parameters")
        unknown = sorted(set(raw) - set(self.names))
        if unknown:
            raise Failure("bad_params", f"unknown parameter {unknown[0]}: accepted are {', '.join(self.names)}")
        for name in self.names:
            if name not in raw:
                raise Failure("bad_params", f"{name} is missing: {self.describe(name)}")
        return {name: self.check_value(name, raw[name]) for name in self.names}
