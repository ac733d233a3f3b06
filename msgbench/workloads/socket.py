"""socket (seed 002): a size larger than the total would send no whole message."""

from msgbench.spec import ParamError


def check(params: dict) -> None:
    if params["size"] > params["total_bytes"]:
        raise ParamError(
            f"size = {params['size']:,} is out of range: size must not exceed total_bytes = "
            f"{params['total_bytes']:,} (the bytes each socket sends; messages = total_bytes / size)"
        )
