"""msgbench target "reference": the error the worker reports, typed access to the request's params
and the variant's options, shared by worker.py (socket) and pubsub_tools.py (pubsub). Standard
library only.

The harness validated the params against the workload spec and filled in every default
(spec/README.md): nothing here checks a range. A field that is absent is a harness bug,
reported as internal; what a tool cannot do is each tool's own `unsupported`."""

import dataclasses
import json


class Failure(Exception):
    """What the worker reports as an error line: kind is the protocol's error kind."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


def read_params(cls, raw):
    """The dataclass cls built from the request's params, each field by its name."""
    names = [field.name for field in dataclasses.fields(cls)]
    missing = [name for name in names if not isinstance(raw, dict) or name not in raw]
    if missing:
        raise Failure("internal", f"params.{missing[0]} is absent (the harness sends every parameter): "
                                  f"params = {json.dumps(raw)[:200]}")
    return cls(**{name: raw[name] for name in names})


def tool_option(request: dict, tools, others: tuple[str, ...] = ()) -> str:
    """The variant's `tool` option (target.toml), one of tools; any option but these and others is unknown."""
    options = request.get("options")
    if not isinstance(options, dict):
        raise Failure("internal", "the request has no options object (spec/README.md, \"The worker protocol\")")
    unknown = sorted(set(options) - {"tool", *others})
    if unknown:
        raise Failure("internal", f"unknown option {unknown[0]}: the reference worker knows "
                                  f"{' and '.join(('tool', *others))}")
    if options.get("tool") not in tools:
        raise Failure("internal", f"option tool = {json.dumps(options.get('tool'))} is not one of "
                                  f"{', '.join(tools)} (target.toml)")
    return options["tool"]
