"""Non-blank, non-comment lines of source files, per file and in total (issue 32's counting).

    python3 scripts/code_lines.py REV LANGUAGE FILE...    # REV: a git revision, or - for the work tree

Comments: // lines and /* */ blocks (Java, Go, Rust, C, C++); % lines (Erlang); -- lines (Haskell).
A line with code and a trailing comment counts as code. Standard library only."""

import re
import subprocess
import sys

LINE_COMMENT = {"erlang": "%", "haskell": "--"}


def code_lines(text: str, language: str) -> int:
    marker = LINE_COMMENT.get(language, "//")
    if marker == "//":
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith(marker))


def main(rev: str, language: str, paths: list[str]) -> None:
    total = 0
    for path in paths:
        if rev == "-":
            with open(path, encoding="utf-8") as f:
                text = f.read()
        else:
            text = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout
        n = code_lines(text, language)
        total += n
        print(n, path)
    print(total, "total")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
