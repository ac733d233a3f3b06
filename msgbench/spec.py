"""The workload specs and JSON Schemas in spec/: loading, parameter checks, verification.

spec/ is the single source of truth shared with every target. The harness fills
in defaults, refuses bad parameters before any worker starts (naming the value and
the accepted range), validates every line a worker prints, and checks each result's
verify counts against the workload's rules.
"""

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema

from msgbench import expr
from msgbench.paths import SPEC_DIR


class ParamError(ValueError):
    """A parameter a user gave is unknown, mistyped or out of range."""


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    seed: str
    description: str
    params: dict
    metrics: dict
    primary_metric: str
    verify_rules: list
    processes: str | None
    raw: dict = field(repr=False)

    def metric_better(self, metric: str) -> str:
        return self.metrics.get(metric, {}).get("better", "none")

    def defaults(self) -> dict:
        return {name: definition["default"] for name, definition in self.params.items()}


@cache
def workloads() -> dict[str, Workload]:
    found = {}
    for path in sorted((SPEC_DIR / "workloads").glob("*.json")):
        raw = json.loads(path.read_text())
        found[raw["workload"]] = Workload(
            name=raw["workload"],
            title=raw["title"],
            seed=raw.get("seed", ""),
            description=raw["description"],
            params=raw["params"],
            metrics=raw["metrics"],
            primary_metric=raw["primary_metric"],
            verify_rules=raw["verify"],
            processes=raw.get("processes"),
            raw=raw,
        )
    return found


def workload(name: str) -> Workload:
    known = workloads()
    if name not in known:
        raise ParamError(f"unknown workload {name!r}; known workloads: {', '.join(sorted(known))}")
    return known[name]


# ---------------------------------------------------------------- parameters


def describe_range(name: str, definition: dict) -> str:
    """The accepted range of one parameter, in words, for error messages."""
    why = definition.get("description")
    text = _range_words(name, definition)
    return f"{text} ({why})" if why and definition.get("type") != "array" else text


def _range_words(name: str, definition: dict) -> str:
    if "enum" in definition:
        return f"{name} must be one of {', '.join(map(str, definition['enum']))}"
    kind = definition.get("type")
    if kind in ("integer", "number"):
        noun = "an integer" if kind == "integer" else "a number"
        low, high = definition.get("minimum"), definition.get("maximum")
        if low is not None and high is not None:
            return f"{name} must be {noun} from {low:,} to {high:,}"
        if low is not None:
            return f"{name} must be {noun} >= {low:,}"
        return f"{name} must be {noun}"
    if kind == "string":
        return f"{name} must be a string of at most {definition.get('maxLength', 'any'):,} characters"
    if kind == "array":
        return f"{name} must be a list ({definition.get('description', '')})"
    return f"{name} must be of type {kind}"


def coerce(name: str, definition: dict, text: str):
    """Turn a command-line string into a parameter value of the spec's type."""
    kind = definition.get("type")
    if kind == "integer":
        try:
            return int(text.replace("_", "").replace(",", ""))
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            raise ParamError(f"{name} = {text!r} is not an integer: {describe_range(name, definition)}") from None
        if number.is_integer():
            return int(number)
        raise ParamError(f"{name} = {text!r} is not an integer: {describe_range(name, definition)}")
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            raise ParamError(f"{name} = {text!r} is not a number: {describe_range(name, definition)}") from None
    if kind in ("array", "object"):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ParamError(f"{name} = {text!r} is not valid JSON: {describe_range(name, definition)}") from None
    return text


def check_param(name: str, definition: dict, value) -> None:
    if isinstance(value, bool) and definition.get("type") in ("integer", "number"):
        raise ParamError(f"{name} = {json.dumps(value)} is out of range: {describe_range(name, definition)}")
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(definition).iter_errors(value))
    if error is None:
        return
    if not error.absolute_path and error.validator in ("required", "additionalProperties", "minItems", "maxItems"):
        raise ParamError(f"{name} = {json.dumps(value)}: {error.message} ({describe_range(name, definition)})")
    if not error.absolute_path:
        raise ParamError(f"{name} = {json.dumps(value)} is out of range: {describe_range(name, definition)}")
    where = name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    if error.validator in ("required", "additionalProperties", "type"):
        raise ParamError(f"{where} = {json.dumps(error.instance)}: {error.message} (in {name} = {json.dumps(value)})")
    # A part of a structured value (fanin's mix): name that part and its own range.
    leaf = str(error.absolute_path[-1])
    raise ParamError(
        f"{where} = {json.dumps(error.instance)} is out of range: {describe_range(leaf, error.schema)}"
        f" (in {name} = {json.dumps(value)})"
    )


def resolve_params(wl: Workload, given: dict) -> dict:
    """Every parameter of the workload: the given ones checked, the rest defaulted."""
    unknown = sorted(set(given) - set(wl.params))
    if unknown:
        raise ParamError(
            f"unknown parameter {unknown[0]!r} for workload {wl.name}; "
            f"its parameters are: {', '.join(wl.params)}"
        )
    params = wl.defaults() | given
    for name, definition in wl.params.items():
        check_param(name, definition, params[name])
    return params


def processes_needed(wl: Workload, params: dict) -> int:
    if not wl.processes:
        return 1
    return int(expr.evaluate(wl.processes, _numeric(params)))


# ---------------------------------------------------------------- verification


def failed_rules(wl: Workload, params: dict, verify: dict) -> list[str]:
    """The verification rules a result breaks, each as a sentence with the numbers."""
    env = _numeric(params) | {k: v for k, v in verify.items() if isinstance(v, (int, float))}
    failures = []
    for rule in wl.verify_rules:
        text = rule["rule"]
        missing = sorted(expr.names_in(text) - set(env))
        if missing:
            failures.append(f"{text}: the worker did not report {', '.join(missing)}")
            continue
        if not expr.evaluate(text, env):
            shown = ", ".join(f"{n}={env[n]}" for n in sorted(expr.names_in(text)))
            failures.append(f"{text} does not hold ({shown})")
    return failures


def missing_metrics(wl: Workload, metrics: dict, params: dict | None = None) -> list[str]:
    """Required metrics the result lacks.

    A metric marked "optional" may be absent (the harness adds broker CPU only where
    there is a broker); one with a "when" rule is required only when it holds.
    """
    env = _numeric(params or {})
    missing = []
    for name, definition in wl.metrics.items():
        if name in metrics or definition.get("optional"):
            continue
        when = definition.get("when")
        if when and not expr.evaluate(when, env):
            continue
        missing.append(name)
    return missing


def _numeric(params: dict) -> dict:
    return {k: v for k, v in params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


# ---------------------------------------------------------------- protocol schemas


@cache
def _schema(schema_file: str) -> dict:
    return json.loads((SPEC_DIR / schema_file).read_text())


def message_problem(message: object) -> str | None:
    """None if a worker's line matches the message schema, else what is wrong.

    The line is checked against the definition its "type" names, so the error says
    what is wrong with that kind of message rather than with a oneOf.
    """
    definitions = _schema("message.schema.json")["$defs"]
    if not isinstance(message, dict):
        return f"expected a JSON object, got {type(message).__name__}"
    kind = message.get("type")
    if kind not in definitions:
        return f"type {kind!r} is not one of {', '.join(definitions)}"
    return _first_error(definitions[kind], message)


def _first_error(schema: dict, instance: object) -> str | None:
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is None:
        return None
    where = "/".join(map(str, error.absolute_path)) or "message"
    return f"{where}: {error.message}"


def request_problem(request: dict) -> str | None:
    return _first_error(_schema("request.schema.json"), request)


def spec_path(name: str) -> Path:
    return SPEC_DIR / "workloads" / f"{name}.json"
