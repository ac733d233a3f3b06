"""Counts a worker's lines of code the way issue 32's tables do
(docs/measurements/issue-32-kits.md): non-blank lines that are not only a comment,
without the tests a source file carries (Rust: from `#[cfg(test)]` at the start of
a line to the end of the file). The language is the file's suffix.

    python3 scripts/worker_lines.py FILE...              # the work tree
    python3 scripts/worker_lines.py --rev REV FILE...    # the files as git revision REV holds them

One count per file, then the total. Comments: `//` lines and `/* */` blocks (Rust, C,
C++, Go, Java), `%` lines (Erlang), `--` lines and `{- -}` blocks (Haskell), `#`
lines (Python). A line with code and a trailing comment counts as code. Standard
library only.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Line comments and block comments (open, close) per language, by file suffix.
LINE = {".rs": "//", ".c": "//", ".h": "//", ".cpp": "//", ".hpp": "//", ".go": "//",
        ".java": "//", ".hs": "--", ".erl": "%", ".hrl": "%", ".py": "#"}
BLOCK = {".hs": ("{-", "-}"), ".py": None, ".erl": None, ".hrl": None}


def code_lines(text: str, suffix: str) -> int:
    """The counted lines of one file's text, its language given by its suffix."""
    if suffix not in LINE:
        raise SystemExit(f"unknown suffix {suffix!r}; counted: {', '.join(sorted(LINE))}")
    line_comment = LINE[suffix]
    block = BLOCK.get(suffix, ("/*", "*/"))
    count, in_block = 0, False
    for raw in text.splitlines():
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


def text_of(name: str, rev: str | None) -> str:
    if rev is None:
        return Path(name).read_text()
    shown = subprocess.run(["git", "show", f"{rev}:{name}"], capture_output=True, text=True, check=False)
    if shown.returncode != 0:
        raise SystemExit(f"--rev {rev}: {name}: {shown.stderr.strip()}")
    return shown.stdout


def main(argv: list[str]) -> int:
    rev = None
    if argv[:1] == ["--rev"]:
        if len(argv) < 2:
            print("--rev needs a git revision, e.g. --rev db1df9c", file=sys.stderr)
            return 2
        rev, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    total = 0
    for name in argv:
        n = code_lines(text_of(name, rev), Path(name).suffix)
        total += n
        print(f"{n:6d}  {name}")
    print(f"{total:6d}  total")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
