"""`msgbench doctor`: what is installed, in which version, and how to add the rest."""

import importlib.metadata
import os
import shutil

from msgbench.running import tuning
from msgbench.views import tables
from msgbench.workers import catalogue, targets

# Tools the harness itself and the test suite use, beyond the targets' runtimes.
TOOLS = [
    ("chromium", "headless browser for the results page's tests", "apt-get install -y chromium"),
    ("ssh", "roles placed on hosts (--hosts, docs/hosts.md)", "apt-get install -y openssh-client"),
    ("rsync", "deploying the built targets to hosts (--hosts)", "apt-get install -y rsync"),
    ("sshd", "the hosts tests: an sshd per network namespace", "apt-get install -y openssh-server"),
]
PYTHON_PACKAGES = ["jsonschema", "matplotlib", "pyyaml", "pytest", "ruff", "playwright"]


def report() -> tuple[str, bool]:
    """The doctor's table, and whether every target can run."""
    rows, all_ok = [], True
    for t in targets.registry().values():
        missing = t.missing_requirements()
        all_ok &= not missing
        version = targets.runtime_version(t) if not missing else "-"
        rows.append([t.name, t.kind, "yes" if not missing else "NO", version,
                     ", ".join(t.workloads), t.install_command() if missing else ""])
    text = tables.render(["target", "kind", "installed", "version", "workloads", "install with"], rows)
    service_rows = []
    for name, service in catalogue.SERVICES.items():
        users = [t.name for t in targets.registry().values() if name in t.services]
        found = catalogue.installed(service)
        service_rows.append([name, service.binary, "yes" if found else "no",
                             catalogue.version(service) if found else "-", ", ".join(users) or "-",
                             "" if found else service.install_command()])
    text += "\n\n" + tables.render(["service", "binary", "installed", "version", "used by", "install with"],
                                    service_rows)
    tool_rows = []
    for name, purpose, install in TOOLS:
        found = shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin:" + os.environ.get("PATH", ""))
        tool_rows.append([name, "yes" if found else "no", purpose, "" if found else install])
    for package in PYTHON_PACKAGES:
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = None
        tool_rows.append([package, version or "no", "Python package",
                          "" if version else "pip install -e '.[test]'"])
    text += "\n\n" + tables.render(["tool", "installed", "for", "install with"], tool_rows)
    text += "\n\n" + noise_sources()
    return text, all_ok


def noise_sources() -> str:
    """What on this machine adds noise to figures, and whether `msgbench tune` changes it."""
    lines = ["What adds noise to figures here (and what `msgbench tune` does about it):"]
    for s in tuning.sources():
        lines.append(f"  {s.name}: {s.now}")
        if s.effect != "-":
            lines.append(f"      {s.effect}")
        if s.tune != "-":
            lines.append(f"      tune: {s.tune}")
    return "\n".join(lines)
