"""pubsub (seed 001): the sources are spread over the threads, so no thread is idle."""

from msgbench.spec import ParamError


def check(params: dict) -> None:
    if params["source_threads"] > params["sources"]:
        raise ParamError(
            f"source_threads = {params['source_threads']} is out of range: it must not exceed "
            f"sources = {params['sources']} (each thread publishes on its own sources, as the seed's "
            f"lbmmsrc -T 2 -S 2)"
        )
