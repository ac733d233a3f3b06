"""Builds: several builds of one target's runtime, measured side by side in one run.

A build is declared on the command line, `--build erlang:otp25=/usr/lib/erlang/bin`
(TARGET:LABEL, then =FOLDER put first on PATH), or in a file (`--builds builds.toml`):

    [[build]]
    target = "go"
    label = "go1.22"
    path = "/usr/lib/go-1.22/bin"             # first on PATH
    env = { GOROOT = "/usr/lib/go-1.22" }     # GOROOT, CC, JAVA_HOME, RUSTUP_TOOLCHAIN, ...

    [[build]]
    target = "erlang"
    label = "sbt"
    args = ["+sbt", "tnnps"]                  # runtime flags alone: the seed's erl +sbt tnnps

    [[build]]
    target = "java"
    label = "old"
    checkout = "../msgbench-main"             # another checkout's target, as built there

A build with a path or an environment may change the compiler, so the target is built
for it in a folder of its own, results/builds/<target>@<label>/ ($MSGBENCH_BUILDS_DIR), a mirror of the
checkout whose target folder is a copy and everything else a link, so that relative
paths (a Go module's ../../kits/go) still resolve. No build overwrites another's
binary. A build of flags alone runs from the target's own folder. A build with a
checkout runs that checkout's target (its target.toml, code and outputs), built there.
"""

import re
import shutil
import subprocess
import tomllib
from dataclasses import replace
from pathlib import Path

from msgbench.core import configfile
from msgbench.core.paths import builds_dir
from msgbench.workers import targets
from msgbench.workers.targets import Build

LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
# What a target's build writes: never copied into a build's folder.
_OUTPUTS = ("bin", "ebin", "target", "build", ".venv", "__pycache__", "_build", "node_modules")


class BuildError(ValueError):
    """A build that is malformed, names an unknown target, or cannot be set up."""


def parse_option(text: str) -> tuple[str, Build]:
    """`TARGET:LABEL` or `TARGET:LABEL=FOLDER` from --build."""
    head, _, path = text.partition("=")
    target, sep, label = head.partition(":")
    if not sep or not target or not label:
        raise BuildError(f"--build {text!r}: expected TARGET:LABEL or TARGET:LABEL=FOLDER "
                         "(e.g. erlang:otp25=/usr/lib/erlang/bin)")
    return target, _checked(Build(label=label, path=path), target, f"--build {text!r}")


def load_file(path: Path) -> list[tuple[str, Build]]:
    """Every [[build]] of a builds.toml; a malformed one is one line naming the file, the
    key and what it takes."""
    try:
        raw = tomllib.loads(configfile.read_text(path, "the builds file"))
    except configfile.ConfigError as exc:
        raise BuildError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise BuildError(f"{path}: not TOML: {exc}") from None
    entries = raw.get("build")
    if not isinstance(entries, list) or not entries:
        raise BuildError(f"{path}: expected one or more [[build]] tables")
    try:
        return [_entry(entry, path, i) for i, entry in enumerate(entries, start=1)]
    except configfile.ConfigError as exc:
        raise BuildError(str(exc)) from None


def _entry(entry: object, path: Path, i: int) -> tuple[str, Build]:
    where = f"build {i}"
    allowed = {"target", "label", "path", "env", "args", "checkout"}
    entry = configfile.table(entry, path, where, empty_ok=False)
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise BuildError(f"{path}, {where}: unknown key {unknown[0]!r}; a build has {', '.join(sorted(allowed))}")
    for key in ("target", "label"):
        if key not in entry:
            raise BuildError(f"{path}, {where}: {key} is required (text)")
    target = configfile.text(entry["target"], path, f"{where}.target")
    label = configfile.text(entry["label"], path, f"{where}.label")
    folder = configfile.text(entry.get("path", ""), path, f"{where}.path")
    env = configfile.table(entry.get("env", {}), path, f"{where}.env")
    for name, value in env.items():
        if not name or "=" in name or any(ord(c) < 32 for c in name):
            raise configfile.wrong(path, f"{where}.env", "a table of variable names (no '=', no control "
                                   "characters)", name)
        configfile.text(value, path, f"{where}.env.{name}")
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise configfile.wrong(path, f"{where}.args", "a list of text", args)
    for n, arg in enumerate(args, start=1):
        configfile.text(arg, path, f"{where}.args[{n}]")
    checkout = configfile.text(entry.get("checkout", ""), path, f"{where}.checkout")
    if checkout and not Path(checkout).is_absolute():
        checkout = str((path.parent / checkout).resolve())  # as written in the file, from its folder
    build = Build(label=label, path=folder, env=tuple(sorted(env.items())), args=tuple(args), checkout=checkout)
    return target, _checked(build, target, f"{path}, {where}")


def _checked(build: Build, target: str, where: str) -> Build:
    if not LABEL.match(build.label):
        raise BuildError(f"{where}: label {build.label!r} must be letters, digits, '.', '_', '+' or '-' "
                         "(up to 64), starting with a letter or digit")
    return build


def expand(declared: list[tuple[str, Build]]) -> dict[str, list[targets.Target]]:
    """target name -> one Target per build, in the order given; labels unique per target."""
    per_target: dict[str, list[targets.Target]] = {}
    for name, build in declared:
        try:
            base = targets.target(name)
        except targets.TargetError as exc:
            raise BuildError(f"build {name}:{build.label}: {exc}") from None
        siblings = per_target.setdefault(name, [])
        if any(t.build_label == build.label for t in siblings):
            raise BuildError(f"build {name}:{build.label} is declared twice")
        if build.checkout:
            siblings.append(replace(_from_checkout(name, build), build_of=build))
            continue
        usable = not build.path or Path(build.path).is_dir()  # a missing one is skipped by the plan
        folder = _folder_for(base, build) if build.compiles_apart and usable else base.folder
        siblings.append(replace(base, build_of=build, folder=folder))
    return per_target


def _from_checkout(name: str, build: Build) -> targets.Target:
    """The target as another checkout defines and builds it (its own target.toml), so old
    code runs as it ran, beside this checkout's."""
    folder = Path(build.checkout) / "targets" / name
    where = f"build {name}:{build.label}: checkout {build.checkout}"
    if not (folder / "target.toml").is_file():
        raise BuildError(f"{where} has no targets/{name}/target.toml (expected a msgbench checkout)")
    try:
        found = targets.load_target(folder)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BuildError(f"{where}: its target.toml cannot be read: {exc}") from None
    if found.name != name:
        raise BuildError(f"{where}: targets/{name}/target.toml names {found.name!r}")
    return found


def _folder_for(base: targets.Target, build: Build) -> Path:
    """The build's own copy of the target folder, in a mirror of the checkout."""
    root = builds_dir() / f"{base.name}@{build.label}"
    checkout = base.folder.parent.parent
    root.mkdir(parents=True, exist_ok=True)
    for entry in checkout.iterdir():  # everything but targets/ is a link to the checkout's
        if entry.name in ("targets", "results", ".git"):
            continue
        link = root / entry.name
        if not link.is_symlink() and not link.exists():
            link.symlink_to(entry)
    (root / "targets").mkdir(exist_ok=True)
    for sibling in base.folder.parent.iterdir():  # other targets (a shared kit) as links
        link = root / "targets" / sibling.name
        if sibling.name != base.name and not link.is_symlink() and not link.exists():
            link.symlink_to(sibling)
    copy = root / "targets" / base.name
    _sync(base.folder, copy)
    return copy


def _sync(source: Path, copy: Path) -> None:
    """The target's sources, copied over the build's folder (its build outputs kept)."""
    tracked = _tracked_files(source)
    if tracked is None:
        shutil.copytree(source, copy, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_OUTPUTS))
        return
    for relative in tracked:
        destination = copy / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / relative, destination)


def _tracked_files(folder: Path) -> list[str] | None:
    """The files git tracks in folder (what a build reads), or None outside a git checkout."""
    try:
        proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "."],
                              cwd=folder, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return [name for name in proc.stdout.decode().split("\0") if name and (folder / name).is_file()]


# Written in a build's own copy of the target folder once its build succeeds: --no-build
# then knows whether the copy was ever built (an unbuilt one errors at every measurement).
BUILT_STAMP = ".msgbench-built"


def has_own_copy(t: targets.Target) -> bool:
    """Whether the build is built in a folder of its own (a path or an environment)."""
    return bool(t.build_of and t.build_of.compiles_apart and t.build)


def mark_built(t: targets.Target) -> None:
    if has_own_copy(t):
        (t.folder / BUILT_STAMP).write_text(t.build + "\n")


def unbuilt(t: targets.Target) -> bool:
    """A build whose own copy was never built (so --no-build cannot run it)."""
    return has_own_copy(t) and not (t.folder / BUILT_STAMP).is_file()
