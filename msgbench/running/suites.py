"""Suites: named lists of scenarios in suites/<name>.toml.

A scenario is a workload, its fixed parameters and at most one swept parameter, or
a list of `cases` (points that set several parameters, such as chat's groups and
users per group) with an expression `x_value` that gives each point's x.
`foreach` repeats a scenario for each value of another parameter (the seed grids
are n x m), and `note` records how a suite departs from the seed (scaled grids).
"""

import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from msgbench.core import expr
from msgbench.core.paths import SUITES_DIR


class SuiteError(ValueError):
    pass


@dataclass(frozen=True)
class Scenario:
    name: str
    workload: str
    params: dict
    sweep: str | None = None
    values: tuple = ()
    targets: tuple[str, ...] | None = None  # None: every target that implements it
    variants: str = "default"  # default | all | a comma-separated list
    repeat: int | None = None
    warmup: int | None = None
    timeout_s: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    cases: tuple[dict, ...] = ()  # points that set several parameters at once
    x_value: str | None = None  # with cases: the expression that gives each point's x

    def points(self) -> list[tuple[object, dict]]:
        """(x, params) for each value of the swept parameter, or one (None, params)."""
        if self.cases:
            found = []
            for case in self.cases:
                params = dict(self.params) | case
                found.append((expr.evaluate(self.x_value, params), params))
            return found
        if not self.sweep:
            return [(None, dict(self.params))]
        return [(value, dict(self.params) | {self.sweep: value}) for value in self.values]


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    repeat: int
    warmup: int
    scenarios: list[Scenario]
    notes: tuple[str, ...]
    min_time_s: float | None = None  # each timed section calibrated to this (calibrate.py)
    budget_s: float | None = None  # the suite's whole time: repetitions are added within it


def suite_names() -> list[str]:
    return sorted(p.stem for p in SUITES_DIR.glob("*.toml"))


def load_suite(name: str) -> Suite:
    """A suite by name (suites/<name>.toml), or a suite file by its path."""
    if name.endswith(".toml") or "/" in name:
        path = Path(name)
        if not path.is_file():
            raise SuiteError(f"suite file {name} does not exist (or give a suite's name: {', '.join(suite_names())})")
        return parse_suite(path.stem, path)
    path = SUITES_DIR / f"{name}.toml"
    if not path.exists():
        raise SuiteError(f"unknown suite {name!r}; suites: {', '.join(suite_names())}, or a suite file's path")
    return parse_suite(name, path)


def parse_suite(name: str, path: Path) -> Suite:
    raw = tomllib.loads(path.read_text())
    scenarios = []
    for entry in raw.get("scenario", []):
        scenarios += _expand(entry, path)
    return Suite(
        name=name,
        description=raw.get("description", ""),
        repeat=int(raw.get("repeat", 3)),
        warmup=int(raw.get("warmup", 1)),
        scenarios=scenarios,
        notes=tuple(raw.get("notes", [])),
        min_time_s=_seconds(raw, "min_time_s", path),
        budget_s=_seconds(raw, "budget_s", path),
    )


def _seconds(raw: dict, key: str, path: Path) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise SuiteError(f"{path}: {key} = {value!r}: give a number of seconds >= 0")
    return float(value)


def _expand(entry: dict, path: Path) -> list[Scenario]:
    for key in ("name", "workload"):
        if key not in entry:
            raise SuiteError(f"{path}: a scenario has no {key!r}")
    sweep = entry.get("sweep") or {}
    if len(sweep) > 1:
        raise SuiteError(f"{path}: scenario {entry['name']} sweeps {len(sweep)} parameters; one at most")
    sweep_name, values = next(iter(sweep.items()), (None, ()))
    cases = tuple(entry.get("cases", ()))
    if cases:
        if sweep or "x" not in entry or "x_value" not in entry:
            raise SuiteError(f"{path}: scenario {entry['name']} with cases needs x and x_value, and no sweep")
        sweep_name = entry["x"]
    foreach = entry.get("foreach") or {}
    combos = [dict(zip(foreach, combo, strict=True)) for combo in itertools.product(*foreach.values())]
    targets = entry.get("targets")
    found = []
    for combo in combos:
        suffix = "".join(f" {k}={v}" for k, v in combo.items())
        found.append(Scenario(
            name=entry["name"] + suffix,
            workload=entry["workload"],
            params=dict(entry.get("params", {})) | combo,
            sweep=sweep_name,
            values=tuple(values),
            targets=tuple(targets) if targets else None,
            variants=entry.get("variants", "default"),
            repeat=entry.get("repeat"),
            warmup=entry.get("warmup"),
            timeout_s=entry.get("timeout_s"),
            notes=tuple(entry.get("notes", [])),
            cases=cases,
            x_value=entry.get("x_value"),
        ))
    return found
