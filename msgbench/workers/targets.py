"""The target registry: targets/<name>/target.toml, availability, builds and versions."""

import contextlib
import os
import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from msgbench.core import interrupts, spec
from msgbench.core.paths import targets_dir
from msgbench.workers import catalogue, sysinfo
from msgbench.workers.groups import stop_group


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
    # Memory per process where the variant's processes weigh more than its target's for every workload
    # it runs (reference/kafka_perf: a JVM per producer and consumer, where the other tools need less).
    per_process_bytes: int | None = None

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
    built for it in a folder of its own (msgbench/running/builds.py); one made of runtime
    flags alone (erl +sbt tnnps) runs the target's own build."""

    label: str
    path: str = ""  # a folder put first on PATH: the runtime's or the compiler's bin
    env: tuple[tuple[str, str], ...] = ()  # GOROOT, CC, JAVA_HOME, RUSTUP_TOOLCHAIN, ...
    args: tuple[str, ...] = ()  # runtime flags added to every variant's
    # Another msgbench checkout whose target this build runs: its target.toml, its code and
    # what was built there (old code against new, interleaved in one run).
    checkout: str = ""

    @property
    def compiles_apart(self) -> bool:
        return bool(self.path or self.env) and not self.checkout

    def describe(self) -> dict:
        return {"path": self.path, "env": dict(self.env), "args": list(self.args)} | \
            ({"checkout": self.checkout} if self.checkout else {})


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
    services: tuple[str, ...]
    default_variant: str
    per_process_bytes: int
    per_process_bytes_for: dict  # per workload, where its processes weigh more than the ring's
    max_processes: int
    variants: dict[str, Variant]
    build_of: Build | None = None  # one build of the runtime, when the run compares builds
    # The target.toml keys this registry does not read, as written: a workload plug-in's
    # (msgbench/running/workloads: RunPlugin.target_keys declares them and checks them;
    # a server kind's server command, its variants, its memory per connection).
    extra: dict = field(default_factory=dict)

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
        """The one line a worker reads on stdin (spec/request.schema.json). A param the
        spec marks omit_at_default is left out at its default: the workers that came
        before it refuse parameter names they do not know (spec/README.md)."""
        params = spec.sent_params(workload, params)
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

    def process_bytes(self, workload: str, variant: Variant | None = None) -> int:
        """Measured memory per process for a workload (and variant, where it says its own), for the
        harness's fit check."""
        if variant is not None and variant.per_process_bytes is not None:
            return int(variant.per_process_bytes)
        return int(self.per_process_bytes_for.get(workload, self.per_process_bytes))

    def services_for(self, variant: Variant) -> tuple[str, ...]:
        """The brokers a variant needs: its own (a reference tool's), else the target's."""
        return variant.services or self.services

    def missing_requirements(self, services: bool = True, built_services: bool = True) -> list[str]:
        """Tools and service binaries this target needs that are not installed.
        services=False: what building it needs, its tools only; the brokers it runs
        against are needed to run it, and one may be another target's build (reference's
        Kafka tools use the broker the kafka target's build fetches).
        built_services=False: leave out the brokers a target's build fetches, which no
        Debian package installs (what missing_packages asks)."""
        path = self.build_env().get("PATH")
        missing = [tool for tool in self.requires if not _found(tool, path)]
        if not services:
            return missing
        needed = dict.fromkeys(s for v in self.variants.values() for s in self.services_for(v))
        for name in needed:
            service = catalogue.spec(name)
            if service.built_by and (service.built_by == self.name or not built_services):
                continue  # kafka: a build fetches it
            if not catalogue.installed(service):
                missing.append(f"{service.binary} (service {name})")
        return missing

    def install_command(self) -> str:
        if self.install_hint:
            return self.install_hint
        return f"apt-get install -y {' '.join(self.packages)}" if self.packages else ""

    def argv(self, variant: Variant, process_limit: int) -> list[str]:
        return self.expand(self.run, variant, process_limit)

    def serve_argv(self, variant: Variant, process_limit: int) -> list[str]:
        return self.expand(self.serve, variant, process_limit)

    def expand(self, template, variant: Variant, process_limit: int) -> list[str]:
        """A command of target.toml with the variant's (and the build's) arguments where
        {variant_args} stands and the process limit where {process_limit} stands."""
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


# The target.toml keys load_target reads; any other belongs to a workload plug-in (Target.extra).
READ_HERE = frozenset({"name", "kind", "language", "description", "requires", "packages", "install_hint", "build",
                       "run", "serve", "version", "services", "default_variant", "per_process_bytes",
                       "per_process_bytes_for", "max_processes", "variants"})


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
            per_process_bytes=body.get("per_process_bytes"),
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
        services=tuple(raw.get("services", [])),
        default_variant=raw.get("default_variant", next(iter(variants))),
        per_process_bytes=int(raw.get("per_process_bytes", 4096)),
        per_process_bytes_for=dict(raw.get("per_process_bytes_for", {})),
        max_processes=int(raw.get("max_processes", 1_000_000)),
        variants=variants,
        extra={key: value for key, value in raw.items() if key not in READ_HERE},
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


def require_installed(t: Target, to_build: bool = False) -> None:
    """Raise, saying what to install, when t cannot run here (to_build: cannot be built)."""
    if t.build_of and t.build_of.path and not Path(t.build_of.path).is_dir():
        raise TargetError(f"build {t.label}: its folder {t.build_of.path} does not exist")
    if t.build_of and t.build_of.path:
        _require_runtime_in_folder(t)
    missing = t.missing_requirements(services=not to_build)
    if missing:
        hint = t.install_command()
        how = f"; install it with: {hint}" if hint else ""
        where = f" (build {t.build_label}: PATH starts {t.build_of.path})" if t.build_of and t.build_of.path else ""
        raise TargetError(f"target {t.label} needs {', '.join(missing)}, which is not installed{where}{how}")
    if t.build_of:
        _require_working_runtime(t)


def _require_runtime_in_folder(t: Target) -> None:
    """A build's folder must hold one of the target's tools (go, erl, java, gcc, ...): one
    that holds none would run the system's runtime, first found further on PATH, under
    the build's label."""
    tools = [tool for tool in t.requires if "/" not in tool]
    if tools and not any(shutil.which(tool, path=t.build_of.path) for tool in tools):
        raise TargetError(f"build {t.label}: its folder {t.build_of.path} holds none of {', '.join(tools)}: "
                          "it would run the system's runtime under the build's name; give the folder with the "
                          "runtime's executables (its bin)")


def _require_working_runtime(t: Target) -> None:
    """A build whose runtime is there but broken (a half-installed tree, a missing shared
    library) is refused by name before it runs, as a missing one is: its version command
    must succeed."""
    if not t.version:
        return
    try:
        code, out, err = _asked_version(t)
    except sysinfo.CommandHung as exc:
        raise TargetError(f"build {t.label}: its version command {exc}; is the runtime working?") from None
    if code is None:
        raise TargetError(f"build {t.label}: its version command {shlex.join(t.version)} cannot start: {err}")
    if code != 0:
        said = (err.strip() or out.strip()).splitlines()
        raise TargetError(f"build {t.label}: its runtime does not work: `{shlex.join(t.version)}` exited with "
                          f"code {code}" + (f": {said[0].strip()}" if said else ""))


@cache
def _asked_version(t: Target) -> tuple[int | None, str, str]:
    """The version command's exit code, stdout and stderr, asked once per target (or
    build) object: it can take a runtime's whole start-up (erl, java), and both the check
    of a build's runtime and the run's metadata read it. Exit code None: it could not
    start (stderr says why). CommandHung is raised, not kept."""
    try:
        proc = sysinfo.run_bounded(t.version, cwd=t.folder, env=t.build_env())
    except OSError as exc:
        return None, "", str(exc)
    return proc.returncode, proc.stdout, proc.stderr


def build(t: Target, quiet: bool = True, log: Path | None = None, jobs: int | None = None,
          group=None) -> None:
    """Build a target in its folder; raise with the build's output when it fails.

    log: keep the build's whole output in this file (a build beside others keeps its own;
    the error names the file and ends with the output's tail). jobs: compile jobs within
    the build (MAKEFLAGS -jN for the Makefile, CARGO_BUILD_JOBS for cargo). group: the
    build runs in a process group of its own, given to group.add(pgid) as it starts and
    group.remove(pgid) as it ends (a run makes it yield the CPU while it measures:
    running/building.Yielding)."""
    require_installed(t, to_build=True)
    if not t.build:
        return
    env = t.build_env()
    if jobs:
        env |= {"MAKEFLAGS": f"-j{jobs}", "CARGO_BUILD_JOBS": str(jobs)}
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(log, "w+")) if log is not None else None
        if out is None and not quiet:
            streams = {}
        elif out is None:
            streams = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
        else:
            streams = {"stdout": out, "stderr": subprocess.STDOUT}
        interrupts.hold()  # a Ctrl-C inside Popen would lose the build's pid, and the build would go on
        try:
            proc = subprocess.Popen(["bash", "-c", t.build], cwd=t.folder, env=env, text=True,
                                    process_group=0 if group else None, **streams)
        except BaseException:
            interrupts.release()
            raise
        if group:
            group.add(proc.pid)
        try:
            interrupts.release()
            output, _ = proc.communicate()
        finally:
            if proc.poll() is None:  # interrupted: the build goes, with its whole group if it leads one
                if group:
                    stop_group(proc)
                else:
                    proc.kill()
                proc.wait()
            if group:
                group.remove(proc.pid)
        if out is not None:
            out.seek(0)
            output = out.read()
    if proc.returncode != 0:
        where = f"; whole output in {log}" if log is not None else ""
        raise TargetError(f"building target {t.label} failed ({t.build!r} in {t.folder}, exit "
                          f"{proc.returncode}{where}):\n{(output or '')[-4000:]}")


def runtime_version(t: Target) -> str:
    """The runtime's version as its own command prints it (its first line), or why not."""
    if not t.version:
        return ""
    env = t.build_env()
    if shutil.which(t.version[0], path=env.get("PATH")) is None and not (t.folder / t.version[0]).exists():
        return "not installed"
    try:
        code, out, err = _asked_version(t)
    except sysinfo.CommandHung as exc:
        raise TargetError(f"target {t.label}: its version command {exc}; is the runtime working?") from None
    return f"unknown ({err})" if code is None else sysinfo.first_line(out, err)


def missing_packages() -> list[str]:
    """Debian packages that would provide every target's missing requirements."""
    packages: list[str] = []
    for t in registry().values():
        if t.missing_requirements(built_services=False):
            packages += [p for p in t.packages if p not in packages]
    return packages
