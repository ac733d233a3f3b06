"""What a workload adds to its spec on the run side: one RunPlugin object.

The run side is what plans and measures a point: a parameter's shorthand, a check the
spec's "requires" cannot state, how one measurement is taken, and a server kind (a
workload whose targets serve a harness-side load generator, as chat with server=ws).
What a workload adds to the views (its report section, page graphs, headline, seed
text) is its view-side plug-in (msgbench/views/workloads/): the two never import each other.
Every field has a default, so a workload without a module gets the generic behaviour.
"""

from collections.abc import Callable
from dataclasses import dataclass, field


def _no_special_value(name: str, text: str):
    return None


def _nothing_to_check(params: dict) -> None:
    return None


def _one_worker_run(params: dict, run_once: Callable[[dict], object]):
    return run_once(params)


def _placeable(jobs: list, place: dict) -> None:
    return None


def _no_variant_facts(variant) -> dict:
    return {}


def _target_fine(target) -> None:
    return None


def _no_host_rules(jobs: list, peers) -> list[str]:
    return []


@dataclass(frozen=True)
class ServerKind:
    """A workload's points that measure a target's server through a load generator the
    harness starts in place of the target's worker (the chat server kind). Every hook
    takes the plan's jobs, targets and peers as the runner holds them."""
    # applies(params): the point is of this kind (chat: server=ws).
    applies: Callable[[dict], bool]
    # refusal(target): why a target cannot serve it (it declares no server), or None.
    refusal: Callable[[object], str | None]
    # variants(target): the only variants that serve it.
    variants: Callable[[object], list]
    # fit_problem(target, params, memory_total, headroom): why a point will not fit
    # this machine (descriptors, memory), or None; replaces the generic memory check.
    fit_problem: Callable[[object, dict, int, float], str | None]
    # worker_command(job): the argv, folder and environment started in place of the worker.
    worker_command: Callable[[object], tuple]
    # limits(jobs): a context manager around the run that raises what its workers need.
    limits: Callable[[list], object]
    # check_hosts(jobs, peers, headroom): the fit on each placed host; raises errors.
    check_hosts: Callable[[list, object, float], None]
    # peer_env(target, variant, process_limit, host): what tells the load generator
    # which server to start, where, and whom it stands for.
    peer_env: Callable[[object, object, int, str], dict]
    # The role the load generator plays (it is deployed to that role's hosts in place
    # of the target) and the folder it is built in.
    generator_role: str
    generator_dir: object
    # measure_placed(job, params, peers, request, time_limit_s): one measurement with
    # its roles on hosts (peers.server_kind_placed).
    measure_placed: Callable[[object, dict, object, dict, float], object]
    # build(): build the load generator (raises targets.TargetError), and what it says first.
    build: Callable[[], None]
    build_text: str
    # What check_hosts and measure_placed raise, besides placement's and hosts' errors.
    errors: tuple = ()


@dataclass(frozen=True)
class RunPlugin:
    name: str
    # parse_value(name, text): a -p value written in a shorthand (fanin's mix), or None
    # to read it by the spec's type.
    parse_value: Callable[[str, str], object] = _no_special_value
    # check(params): raise spec.ParamError for what the spec's "requires" cannot state.
    check: Callable[[dict], None] = _nothing_to_check
    # measure(params, run_once): one measurement; usually one worker run.
    measure: Callable = _one_worker_run
    # check_place(jobs, place): why --place (role -> hosts) cannot place the plan's jobs
    # of this workload, or None.
    check_place: Callable[[list, dict], str | None] = _placeable
    # variant_facts(variant): verify counts the harness takes from the variant's settings
    # in target.toml, not from the worker's word (pubsub: lossless).
    variant_facts: Callable[[object], dict] = _no_variant_facts
    # roles: its parts that --place may put on hosts, each a placement.WORKER (the worker
    # itself), PEER (the peer the worker starts) or SERVICE (a broker).
    roles: dict = field(default_factory=dict)
    # spread: the roles that take several hosts, with what runs on each of them.
    spread: dict = field(default_factory=dict)
    # check_hosts(jobs, peers): once the placed hosts are reached (peers.facts known) and
    # before anything is deployed or started, raise placement.PlacementError for what
    # this workload's jobs cannot do across them (pubsub's one clock); the notes to keep.
    check_hosts: Callable[[list, object], list[str]] = _no_host_rules
    # target_keys: the keys of target.toml this workload owns (Target.extra), beside the
    # registry's own; check_target(target): what is wrong with them, or None.
    target_keys: tuple[str, ...] = ()
    check_target: Callable[[object], str | None] = _target_fine
    # The workload's server kind, if it has one.
    server_kind: ServerKind | None = None
    # capacity_axes: what `msgbench capacity` may vary (capacity_axis.Axis), the default
    # first.
    capacity_axes: tuple = ()
