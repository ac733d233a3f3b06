"""Ctrl-C and SIGTERM during a run, without losing track of a child.

A KeyboardInterrupt raised while subprocess.Popen is between fork and return loses
the child's pid: a worker or a broker would then outlive the run. So the run's
handler defers the interrupt while a child is being started, and the starter raises
it as soon as it holds the child and can stop it.

Clean-up is deferred the same way: a second Ctrl-C while a worker, a broker or a
namespace is being stopped would otherwise cut the clean-up short and leave a
process, a temporary directory or a broker's log behind. It only hurries it (a
stop that was waiting out a grace period kills at once, see pending()) and is
raised when the clean-up is done.
"""

import contextlib
import signal
import threading

_depth = 0
_pending = False
_lent = None  # the SIGINT handler hold() replaced outside a run, given back by release()


def _handler(signum, frame) -> None:
    global _pending
    if _depth:
        _pending = True
        return
    raise KeyboardInterrupt


def install() -> dict:
    """For the length of a run: SIGINT and SIGTERM raise KeyboardInterrupt (deferred
    during a hold()). Returns the previous handlers, for restore()."""
    return {sig: signal.signal(sig, _handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def restore(previous: dict) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def hold() -> None:
    """Defer interrupts from here until the matching release().

    Outside a run (msgbench build, a test) Python's own handler raises at once, so
    the outermost hold() puts this module's handler in its place until its release().
    Only the main thread takes an interrupt, so in any other thread (a build beside
    others) holding means nothing and is skipped."""
    global _depth, _lent
    if threading.current_thread() is not threading.main_thread():
        return
    if not _depth and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        _lent = signal.signal(signal.SIGINT, _handler)
    _depth += 1


def release() -> None:
    """End a hold(); raise the interrupt that arrived meanwhile, if any.

    Call it inside the try block that stops the child, so no bytecode boundary
    between starting the child and guarding it can take an interrupt.
    """
    global _depth, _pending, _lent
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        if _depth == 1 and _lent is not None:  # still held: an interrupt meanwhile is deferred
            lent, _lent = _lent, None
            signal.signal(signal.SIGINT, lent)
    finally:
        _depth -= 1
    if _pending and not _depth:
        _pending = False
        raise KeyboardInterrupt


def pending() -> bool:
    """An interrupt arrived during a hold(): whoever waits politely should hurry."""
    return _pending


@contextlib.contextmanager
def deferred():
    """Clean-up that an interrupt must not cut short; the interrupt is raised after it."""
    hold()
    try:
        yield
    finally:
        release()
