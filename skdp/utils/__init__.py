"""Layer-0 helpers: validation, random streams, the sklearn compat shim, the schema.

Nothing here imports torch at module import time (``skdp.utils._torch`` does, and is
imported only by torch-using layers).

Progress goes through :mod:`logging` under the ``"skdp"`` logger: :func:`get_logger`,
:func:`log_progress` (structured records, attribute :data:`PROGRESS_KEY`),
:class:`ProgressHandler` (a bar or plain lines) and :func:`verbose_handler` (what an
estimator's ``verbose`` does).
"""

from skdp.utils._logging import (
    LOGGER_NAME,
    PROGRESS_KEY,
    ProgressHandler,
    get_logger,
    log_progress,
    verbose_handler,
)

__all__ = [
    "LOGGER_NAME",
    "PROGRESS_KEY",
    "ProgressHandler",
    "get_logger",
    "log_progress",
    "verbose_handler",
]
