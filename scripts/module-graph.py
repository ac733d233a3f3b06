#!/usr/bin/env python3
"""The harness's module graph in three numbers: its modules, the import arrows between
them (module A imports module B, each pair once, lazy imports in functions included)
and the import circles (groups of two or more modules that reach each other), read
with grimp, the graph library under import-linter.

    .venv/bin/python scripts/module-graph.py [--arrows]

Issue #32's before/after figures come from it (docs/architecture.md).
"""

import sys
from pathlib import Path

import grimp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def circles(modules: list[str], arrows: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    after = {m: sorted(b for a, b in arrows if a == m) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        for n in after[m]:
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            component = []
            while True:
                n = stack.pop()
                component.append(n)
                if n == m:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for m in modules:
        if m not in index:
            visit(m)
    return found


def main() -> int:
    graph = grimp.build_graph("msgbench", cache_dir=None)
    modules = sorted(graph.modules)
    arrows = {(a, b) for a in modules for b in graph.find_modules_directly_imported_by(a) if b != a}
    found = circles(modules, arrows)
    print(f"modules {len(modules)}, arrows {len(arrows)}, circles {len(found)}"
          + "".join(f"\n  circle of {len(c)}: {' '.join(c)}" for c in found))
    if "--arrows" in sys.argv:
        print("\n".join(f"{a} -> {b}" for a, b in sorted(arrows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
