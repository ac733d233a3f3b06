"""CPU lists in the kernel's own form (Cpus_allowed_list, cpuset.cpus, taskset -c), both ways."""


def cpu_list(cpus) -> str:
    """{0, 1, 2, 5} -> '0-2,5', the kernel's own form (Cpus_allowed_list, taskset -c)."""
    ordered = sorted(cpus)
    runs, start = [], None
    for i, cpu in enumerate(ordered):
        if start is None:
            start = cpu
        if i + 1 == len(ordered) or ordered[i + 1] != cpu + 1:
            runs.append(str(start) if start == cpu else f"{start}-{cpu}")
            start = None
    return ",".join(runs)


def parse_cpu_list(text: str) -> frozenset[int]:
    cpus = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return frozenset(cpus)
