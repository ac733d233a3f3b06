"""Text for the terminal, with no control sequences in it.

Labels, notes, ids, metadata, errors and logs come from stored and imported runs and
from workers: a string holding ESC could set the window title, write the clipboard
(OSC 52) or clear the screen when `show` or `history` prints it. msgbench's own
output never needs a control character other than newline and tab, so every line it
prints goes through one filter (install() wraps stdout and stderr) that shows the
others as visible escapes: ESC as `\\x1b`. The progress line's own cursor codes are
written around the filter (raw()).
"""

import re
import sys

# C0 controls but tab and newline, DEL, and the C1 controls (a terminal may act on
# U+009B as it does on ESC [); and Unicode's bidirectional controls (U+061C, U+200E-F,
# U+202A-E, U+2066-9), which reorder what follows them on the line: a label holding
# U+202E (right-to-left override) shows its text, and the columns after it, reversed.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe(text: str) -> str:
    """text with every control character but tab and newline shown as an escape."""
    return _CONTROL.sub(lambda m: _escape(m.group()), text)


class SafeStream:
    """A text stream that writes everything through safe(); the rest is the wrapped stream's."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(safe(text))

    def raw(self):
        """The wrapped stream, for the terminal codes msgbench writes itself."""
        return self._stream

    def __getattr__(self, name):
        return getattr(self._stream, name)


def install() -> tuple:
    """Wrap stdout and stderr; returns what restore() puts back."""
    saved = (sys.stdout, sys.stderr)
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    return saved


def restore(saved: tuple) -> None:
    sys.stdout, sys.stderr = saved


def raw(stream):
    """The stream under a SafeStream (or the stream itself)."""
    return stream.raw() if isinstance(stream, SafeStream) else stream
