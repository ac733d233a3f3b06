"""The target registry: targets/<name>/target.toml, availability, builds and versions."""

import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from msgbench import catalogue, sysinfo
from msgbench.paths import targets_dir


class TargetError(RuntimeError):
    """A target that is unknown, not installed, or failed to build."""


@dataclass(frozen=True, eq=False)
class Variant:
    name: str
    label: str
    description: str
    workloads: tuple[str, ...]
    env: dict  # how the runtime starts (GOMAXPROCS, ...)
    args: tuple[str, ...]  # extra argv for the runtime (erl +S 1)
    options: dict = field(default_factory=dict)  # what the worker applies, sent in the request
    lossless: bool | None = None  # pubsub: the system is configured to deliver every message
    services: tuple[str, ...] = ()  # brokers this variant needs, where they differ from the target's
    reference_for: tuple[str, ...] = ()  # a reference tool: the targets it is the yardstick of
    max_processes: int | None = None  # where the variant holds fewer than its target (platform threads)

    def settings(self) -> dict:
        """What the variant sets, as stored with each of its measurements."""
        found = dict(self.options)
        if self.lossless is not None:
            found["lossless"] = self.lossless
        if self.reference_for:
            found["reference_for"] = list(self.reference_for)
        return found


@dataclass(frozen=True)
class Build:
    """One build of a target's runtime: where its tools are and how it starts.

    A build with a path or an environment may change the compiler, so the target is
    built for it in a folder of its own (msgbench/builds.py); one made of runtime
    flags alone (erl +sbt tnnps) runs the target's own build."""

    label: str
    path: str = ""  # a folder put first on PATH: the runtime's or the compiler's bin
    env: tuple[tuple[str, str], ...] = ()  # GOROOT, CC, JAVA_HOME, RUSTUP_TOOLCHAIN, ...
    args: tuple[str, ...] = ()  # runtime flags added to every variant's

    @property
    def compiles_apart(self) -> bool:
        return bool(self.path or self.env)

    def describe(self) -> dict:
        return {"path": self.path, "env": dict(self.env), "args": list(self.args)}


@dataclass(frozen=True, eq=False)
class Target:
    name: str
    kind: str
    language: str
    description: str
    folder: Path
    requires: tuple[str, ...]
    packages: tuple[str, ...]
    install_hint: str
    build: str | None
    run: tuple[str, ...]
    serve: tuple[str, ...]  # the server half of peer workloads (socket), if any
    version: tuple[str, ...]
    test: str | None
    lint: str | None
    services: tuple[str, ...]
    default_variant: str
    per_process_bytes: int
    per_process_bytes_for: dict  # per workload, where its processes weigh more than the ring's
    max_processes: int
    variants: dict[str, Variant]
    chat_server: list[str] = field(default_factory=list)  # docs/chat-server.md; empty: serves no chat server
    chat_server_variants: list[str] = field(default_factory=list)
    per_connection_bytes: int | None = None  # server memory per connected user, for the plan check
    build_of: Build | None = None  # one build of the runtime, when the run compares builds

    @property
    def build_label(self) -> str:
        return self.build_of.label if self.build_of else ""

    @property
    def label(self) -> str:
        """The target as a run shows it: erlang, or erlang@otp25 for one of its builds."""
        return f"{self.name}@{self.build_label}" if self.build_of else self.name

    def build_env(self) -> dict:
        """The environment the target is built, versioned and run in: the build's tools first."""
        env = dict(os.environ)
        if self.build_of:
            env |= dict(self.build_of.env)
            if self.build_of.path:
                env["PATH"] = os.pathsep.join(filter(None, [self.build_of.path, env.get("PATH", "")]))
        return env

    def request(self, workload: str, variant: Variant, params: dict, repetition: int, warmup: bool) -> dict:
        """The one line a worker reads on stdin (spec/request.schema.json)."""
        return {"workload": workload, "variant": variant.name, "options": variant.options, "params": params,
                "repetition": repetition, "warmup": warmup}

    @property
    def workloads(self) -> list[str]:
        seen = []
        for variant in self.variants.values():
            seen += [w for w in variant.workloads if w not in seen]
        return seen

    def variants_for(self, workload: str) -> list[Variant]:
        return [v for v in self.variants.values() if workload in v.workloads]

    def process_bytes(self, workload: str) -> int:
        """Measured memory per process for a workload, for the harness's fit check."""
        return int(self.per_process_bytes_for.get(workload, self.per_process_bytes))

    def services_for(self, variant: Variant) -> tuple[str, ...]:
        """The brokers a variant needs: its own (a reference tool's), else the target's."""
        return variant.services or self.services

    def missing_requirements(self) -> list[str]:
        """Tools and service binaries this target needs that are not installed."""
        path = self.build_env().get("PATH")
        missing = [tool for tool in self.requires if not _found(tool, path)]
        needed = dict.fromkeys(s for v in self.variants.values() for s in self.services_for(v))
        for name in needed:
            service = catalogue.spec(name)
            if not catalogue.installed(service):
                missing.append(f"{service.binary} (service {name})")
        return missing

    def install_command(self) -> str:
        if self.install_hint:
            return self.install_hint
        return f"apt-get install -y {' '.join(self.packages)}" if self.packages else ""

    def argv(self, variant: Variant, process_limit: int) -> list[str]:
        return self._expand(self.run, variant, process_limit)

    def serve_argv(self, variant: Variant, process_limit: int) -> list[str]:
        return self._expand(self.serve, variant, process_limit)

    def _expand(self, template, variant: Variant, process_limit: int) -> list[str]:
        argv = []
        for element in template:
            if element == "{variant_args}":
                argv += [*variant.args, *(self.build_of.args if self.build_of else ())]
            else:
                argv.append(element.replace("{process_limit}", str(process_limit)))
        return argv

    def worker_env(self, variant: Variant) -> dict:
        return self.build_env() | {k: str(v) for k, v in variant.env.items()}


def _found(requirement: str, path: str | None = None) -> bool:
    """A tool on PATH (the build's, if given), or a file by absolute path (a library's
    header, e.g. /usr/include/zmq.h)."""
    if requirement.startswith("/"):
        return Path(requirement).exists()
    return shutil.which(requirement, path=path) is not None


def load_target(folder: Path) -> Target:
    raw = tomllib.loads((folder / "target.toml").read_text())
    variants = {
        name: Variant(
            name=name,
            label=body.get("label", "idiomatic"),
            description=body.get("description", ""),
            workloads=tuple(body.get("workloads", [])),
            env=dict(body.get("env", {})),
            args=tuple(body.get("args", [])),
            options=dict(body.get("options", {})),
            lossless=body.get("lossless"),
            services=tuple(body.get("services", [])),
            reference_for=tuple(body.get("reference_for", [])),
            max_processes=body.get("max_processes"),
        )
        for name, body in raw.get("variants", {}).items()
    }
    if not variants:
        raise TargetError(f"{folder / 'target.toml'} declares no variants")
    if raw.get("name", folder.name) != folder.name:
        raise TargetError(f"{folder / 'target.toml'}: name {raw['name']!r} differs from its folder")
    return Target(
        name=folder.name,
        kind=raw.get("kind", "runtime"),
        language=raw.get("language", ""),
        description=raw.get("description", ""),
        folder=folder,
        requires=tuple(raw.get("requires", [])),
        packages=tuple(raw.get("packages", [])),
        install_hint=raw.get("install_hint", ""),
        build=raw.get("build"),
        run=tuple(raw["run"]),
        serve=tuple(raw.get("serve", [])),
        version=tuple(raw.get("version", [])),
        test=raw.get("test"),
        lint=raw.get("lint"),
        services=tuple(raw.get("services", [])),
        default_variant=raw.get("default_variant", next(iter(variants))),
        per_process_bytes=int(raw.get("per_process_bytes", 4096)),
        per_process_bytes_for=dict(raw.get("per_process_bytes_for", {})),
        max_processes=int(raw.get("max_processes", 1_000_000)),
        variants=variants,
        chat_server=list(raw.get("chat_server", [])),
        chat_server_variants=list(raw.get("chat_server_variants", [])),
        per_connection_bytes=raw.get("per_connection_bytes"),
    )


@cache
def registry() -> dict[str, Target]:
    root = targets_dir()
    found = {}
    for toml in sorted(root.glob("*/target.toml")):
        target = load_target(toml.parent)
        found[target.name] = target
    return found


def target(name: str) -> Target:
    known = registry()
    if name not in known:
        raise TargetError(f"unknown target {name!r}; known targets: {', '.join(sorted(known))}")
    return known[name]


def require_installed(t: Target) -> None:
    if t.build_of and t.build_of.path and not Path(t.build_of.path).is_dir():
        raise TargetError(f"build {t.label}: its folder {t.build_of.path} does not exist")
    missing = t.missing_requirements()
    if missing:
        hint = t.install_command()
        how = f"; install it with: {hint}" if hint else ""
        where = f" (build {t.build_label}: PATH starts {t.build_of.path})" if t.build_of and t.build_of.path else ""
        raise TargetError(f"target {t.label} needs {', '.join(missing)}, which is not installed{where}{how}")


def build(t: Target, quiet: bool = True) -> None:
    """Build a target in its folder; raise with the build's output when it fails."""
    require_installed(t)
    if not t.build:
        return
    proc = subprocess.run(
        ["bash", "-c", t.build], cwd=t.folder, env=t.build_env(), capture_output=quiet, text=True, check=False
    )
    if proc.returncode != 0:
        output = ((proc.stdout or "") + (proc.stderr or ""))[-4000:]
        raise TargetError(f"building target {t.label} failed ({t.build!r} in {t.folder}, exit "
                          f"{proc.returncode}):\n{output}")


@cache
def runtime_version(t: Target) -> str:
    """The runtime's version as its own command prints it, or why it could not."""
    if not t.version:
        return ""
    env = t.build_env()
    if shutil.which(t.version[0], path=env.get("PATH")) is None and not (t.folder / t.version[0]).exists():
        return "not installed"
    try:
        return sysinfo.first_line_of(t.version, cwd=t.folder, env=env)
    except sysinfo.CommandHung as exc:
        raise TargetError(f"target {t.label}: its version command {exc}; is the runtime working?") from None


def missing_packages() -> list[str]:
    """Debian packages that would provide every target's missing requirements."""
    packages: list[str] = []
    for t in registry().values():
        if t.missing_requirements():
            packages += [p for p in t.packages if p not in packages]
    return packages
