"""The chat server kind (chat with server=ws; docs/chat-server.md), the harness's side.

For such a job the worker started is the one load generator (kits/chatload), not the
target's worker; the target's `chat_server` command reaches it through the peer
environment (MSGBENCH_PEER_COMMAND/CWD/HOST) with the variant's environment and
arguments, and the load generator says hello as the target. Before launch the plan
check refuses a run whose connections will not fit the file descriptors or the memory;
during the run the file-descriptor limit is raised for the worker and restored after.
"""

import contextlib
import json
import resource
import subprocess
from pathlib import Path

from msgbench.core.paths import REPO_ROOT
from msgbench.workers import targets
from msgbench.workers.targets import Target, TargetError, Variant

LOAD_GENERATOR_DIR = REPO_ROOT / "kits" / "chatload"
LOAD_GENERATOR = ("bin/msgbench-chatload",)
LOCALHOST = "127.0.0.1"

# The load generator's memory per connection (gorilla/websocket, 512-byte read buffers,
# pooled write buffers, two goroutines per client): its peak RSS / users was ~15.5 KB in
# realistic runs at 15,000 users and ~17-19 KB in stress at 7,500; rounded up.
LOAD_GENERATOR_BYTES_PER_CONNECTION = 20_000
# Descriptors besides the connections, in each of the two processes: stdio, the
# listening socket, the stats connection, the runtime's own (epoll, pipes, files).
FD_SLACK = 256


# The target.toml keys the chat server kind owns (Target.extra; spec/target.schema.json):
# the server's argv, the variants that serve it, and the server's memory per connected
# user (from a measured run, for the plan check).
COMMAND, VARIANTS, PER_CONNECTION = "chat_server", "chat_server_variants", "per_connection_bytes"
TARGET_KEYS = (COMMAND, VARIANTS, PER_CONNECTION)
DEFAULT_PER_CONNECTION_BYTES = 20_000


def command(target: Target) -> tuple[str, ...]:
    """The target's chat server command (argv relative to its folder); () if it has none."""
    return tuple(target.extra.get(COMMAND, ()))


def serving_variants(target: Target) -> list[Variant]:
    """The variants that serve the chat server kind (none unless a command is declared)."""
    if not command(target):
        return []
    named = target.extra.get(VARIANTS, ())
    return [v for v in target.variants_for("chat") if v.name in named]


def per_connection_bytes(target: Target) -> int:
    return int(target.extra.get(PER_CONNECTION, DEFAULT_PER_CONNECTION_BYTES))


def target_problem(target: Target) -> str | None:
    """What is wrong with the chat server kind's keys in a target.toml, or None: the
    variants named must run chat, beside a command."""
    serving = list(target.extra.get(VARIANTS, ()))
    unknown = [v for v in serving if v not in target.variants or "chat" not in target.variants[v].workloads]
    if unknown or (serving and not command(target)):
        chatty = ", ".join(v.name for v in target.variants_for("chat")) or "none"
        return (f"{target.folder / 'target.toml'}: {VARIANTS} {serving} must name variants that run chat "
                f"({chatty}), beside a {COMMAND} command")
    return None


def is_server_kind(workload: str, params: dict) -> bool:
    return workload == "chat" and params.get("server") == "ws"


def users(params: dict) -> int:
    return int(params["groups"]) * int(params["clients_per_group"])


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def fd_ceiling() -> tuple[int, str]:
    """The most descriptors one process can be given, with where that number comes from:
    the kernel's fs.nr_open where the hard limit can be raised (root with
    CAP_SYS_RESOURCE: tried, then put back), else the hard limit itself."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return 2**31 - 1, "the hard RLIMIT_NOFILE"
    nr_open = _read_int("/proc/sys/fs/nr_open")
    if nr_open and nr_open > hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, nr_open))
        except (ValueError, OSError):
            return hard, "the hard RLIMIT_NOFILE (it cannot be raised here: not root, or no CAP_SYS_RESOURCE)"
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        return nr_open, "fs.nr_open"
    return hard, "the hard RLIMIT_NOFILE"


def fit_problem(target: Target, params: dict, memory_total: int, headroom: float) -> str | None:
    """Why a server=ws run will not fit this machine (one line with the numbers and what
    fits), or None. Checked before launch: the descriptors of both processes, then the
    memory of both at their per-connection estimates."""
    n = users(params)
    ceiling, source = fd_ceiling()
    if n + FD_SLACK > ceiling:
        return (f"chat server=ws with {n:,} users needs {n + FD_SLACK:,} file descriptors in each of the "
                f"server and the load generator; {source} allows {ceiling:,}: at most {ceiling - FD_SLACK:,} users fit")
    file_max = _read_int("/proc/sys/fs/file-max")
    if file_max and 2 * (n + FD_SLACK) > file_max:
        return (f"chat server=ws with {n:,} users needs {2 * (n + FD_SLACK):,} file descriptors (server and load "
                f"generator); the system allows {file_max:,} (fs.file-max): at most "
                f"{file_max // 2 - FD_SLACK:,} users fit")
    per_user = per_connection_bytes(target) + LOAD_GENERATOR_BYTES_PER_CONNECTION
    if memory_total and n * per_user > memory_total * headroom:
        return (f"chat server=ws with {n:,} users on {target.label} needs about {n * per_user / 2**30:,.1f} GiB "
                f"({per_connection_bytes(target):,} B per connection in the server + "
                f"{LOAD_GENERATOR_BYTES_PER_CONNECTION:,} in the load generator): it will not fit in this machine's "
                f"{memory_total / 2**30:,.1f} GiB; at most {int(memory_total * headroom // per_user):,} users fit")
    return None


@contextlib.contextmanager
def raised_fd_limit(jobs):
    """RLIMIT_NOFILE raised for a run that has chat server jobs, for its workers to
    inherit: the soft limit to the hard one, and the hard one (where it may be) to what
    its largest job needs; put back when the run ends."""
    serving = [users(j.params) for j in jobs if is_server_kind(j.scenario.workload, j.params)]
    if not serving:
        yield
        return
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    hard = before[1]
    want = max(serving) + FD_SLACK
    if hard != resource.RLIM_INFINITY and hard < want:
        hard = max(hard, min(want, fd_ceiling()[0]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def server_argv(target: Target, variant: Variant, process_limit: int) -> list[str]:
    """The server's command: target.toml's chat_server with the variant's arguments
    (where {variant_args} stands, else at the end) and its environment (through env(1),
    so that the load generator itself runs with none of it: GOMAXPROCS=1 is the
    server's setting, not the load generator's)."""
    template = command(target)
    argv = target.expand(template, variant, process_limit)
    if "{variant_args}" not in template:
        argv += [*variant.args, *(target.build_of.args if target.build_of else ())]
    env = [f"{k}={v}" for k, v in variant.env.items()]
    return ["env", *env, *argv] if env else argv




def peer_env(target: Target, variant: Variant, process_limit: int, host: str) -> dict:
    """What tells the load generator which server to start, where, and whom it stands
    for (placement.Peers.env_for's branch for the chat server kind)."""
    return {
        "MSGBENCH_PEER_COMMAND": json.dumps(server_argv(target, variant, process_limit)),
        "MSGBENCH_PEER_CWD": str(target.folder),
        "MSGBENCH_PEER_HOST": host,
    } | identity_env(target)


def identity_env(target: Target) -> dict:
    """Whom the load generator stands for: the target and its runtime's version."""
    return {"MSGBENCH_CHAT_TARGET": target.name, "MSGBENCH_CHAT_RUNTIME_VERSION": targets.runtime_version(target)}


def worker_argv() -> tuple[list[str], Path]:
    """The load generator's command and folder."""
    return [str(LOAD_GENERATOR_DIR / LOAD_GENERATOR[0])], LOAD_GENERATOR_DIR


def build_load_generator() -> None:
    """make build in kits/chatload; raise with its output when it fails."""
    proc = subprocess.run(["make", "build"], cwd=LOAD_GENERATOR_DIR, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr)[-4000:]
        raise TargetError(f"building the chat load generator failed (make build in {LOAD_GENERATOR_DIR}, "
                          f"exit {proc.returncode}):\n{output}")
