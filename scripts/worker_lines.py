"""Counts a worker's lines of code the way issue 32's table does
(docs/measurements/issue-32-kits.md): non-blank lines that are not only a comment,
without the tests a source file carries (Rust: from `#[cfg(test)]` at the start of
a line to the end of the file).

    python scripts/worker_lines.py FILE...      # one count per file, then the total
"""

from __future__ import annotations

import sys
from pathlib import Path

# Line comments and block comments (open, close) per language, by file suffix.
LINE = {".rs": "//", ".c": "//", ".h": "//", ".cpp": "//", ".hpp": "//", ".go": "//",
        ".java": "//", ".hs": "--", ".erl": "%", ".hrl": "%", ".py": "#"}
BLOCK = {".hs": ("{-", "-}"), ".py": None, ".erl": None, ".hrl": None}


def code_lines(path: Path) -> int:
    suffix = path.suffix
    if suffix not in LINE:
        raise SystemExit(f"{path}: unknown suffix {suffix!r}; counted: {', '.join(sorted(LINE))}")
    line_comment = LINE[suffix]
    block = BLOCK.get(suffix, ("/*", "*/"))
    count, in_block = 0, False
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if suffix == ".rs" and raw.startswith("#[cfg(test)]"):
            break
        if in_block:
            if block and block[1] in line:
                in_block = False
                line = line.split(block[1], 1)[1].strip()
            else:
                continue
        if block and line.startswith(block[0]):
            if block[1] not in line[len(block[0]):]:
                in_block = True
                continue
            line = line.split(block[1], 1)[1].strip()
        if not line or line.startswith(line_comment):
            continue
        count += 1
    return count


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    total = 0
    for name in argv:
        n = code_lines(Path(name))
        total += n
        print(f"{n:6d}  {name}")
    print(f"{total:6d}  total")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
