"""Progress display and clean termination (SIGTERM) for the ``skdp`` command line."""

from __future__ import annotations

import contextlib
import sys


# ---------------------------------------------------------------------- progress
@contextlib.contextmanager
def _progress(quiet):
    """Show the estimators' progress records (the ``"skdp"`` logger) on stderr.

    The command line attaches its own handler (a bar on a terminal, one line per 10 %
    otherwise) and reads the structured records; it never parses printed text.
    """
    import logging

    from skdp.utils import LOGGER_NAME, ProgressHandler

    if quiet:
        yield
        return
    logger = logging.getLogger(LOGGER_NAME)
    handler = ProgressHandler(sys.stderr, bar="text")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        handler.close()


class _Terminated(BaseException):
    """Raised by the SIGTERM handler so that ``finally`` blocks remove temporary files."""


@contextlib.contextmanager
def _terminate_cleanly():
    """Turn SIGTERM into :class:`_Terminated` for the duration (main thread only)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Terminated(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
