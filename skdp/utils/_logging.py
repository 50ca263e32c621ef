"""Progress reporting through :mod:`logging` (the ``"skdp"`` logger hierarchy).

Every skdp module logs to a child of ``logging.getLogger("skdp")`` (:func:`get_logger`).
Progress of an iterative ``fit`` is an ``INFO`` record carrying a structured payload
under the record attribute :data:`PROGRESS_KEY` (``record.skdp_progress``)::

    {"estimator": "DPFlowDensity", "phase": "fit", "step": 10, "total": 200,
     "epsilon_spent": 0.41, "loss": None}

so a program (the ``skdp`` command line, a notebook widget) reads the numbers from the
record instead of parsing text. ``verbose`` does not change what is logged: an
estimator's ``verbose > 0`` only attaches a handler for the duration of ``fit``
(:func:`verbose_handler`), a progress bar when ``tqdm`` is installed and standard error
is a terminal, plain lines otherwise. Applications configure ``logging`` as usual
(``logging.getLogger("skdp").setLevel(...)``, their own handlers).

Privacy. A progress record never carries an un-noised statistic of the private rows:
``epsilon_spent`` is a function of public parameters only, and ``loss`` (the
training loss on a batch of private rows) is attached only when the caller states the
fit is not private (``private=False``: ``epsilon=inf`` or a non-private opt-in);
:func:`log_progress` drops it otherwise.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import sys
from collections.abc import Iterator

__all__ = [
    "LOGGER_NAME",
    "PROGRESS_KEY",
    "ProgressHandler",
    "get_logger",
    "log_progress",
    "quiet",
    "verbose_handler",
]

#: Name of the root of skdp's logger hierarchy.
LOGGER_NAME = "skdp"
#: Attribute of a :class:`logging.LogRecord` holding a progress payload (a dict).
PROGRESS_KEY = "skdp_progress"

logging.getLogger(LOGGER_NAME).addHandler(logging.NullHandler())

_QUIET = contextvars.ContextVar("skdp_quiet", default=False)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No progress records and no ``verbose`` handler inside this block.

    For meta-estimators whose *number* of inner fits must stay hidden (private
    selection: the count of per-fit records would reveal the number of runs).

    Examples
    --------
    >>> import logging
    >>> from skdp.utils._logging import get_logger, log_progress, quiet
    >>> with quiet():
    ...     log_progress(get_logger("demo"), estimator="E", step=1, total=1)
    """
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def get_logger(name: str | None = None) -> logging.Logger:
    """The ``"skdp"`` logger, or its child for a module name.

    Parameters
    ----------
    name : str or None, default=None
        A module name (``__name__``; ``"skdp."`` is prefixed when missing), or ``None``
        for the ``"skdp"`` logger itself.

    Returns
    -------
    logging.Logger

    Examples
    --------
    >>> from skdp.utils import get_logger
    >>> get_logger("skdp.density._flow_density").parent.name
    'skdp'
    """
    if not name or name == LOGGER_NAME:
        return logging.getLogger(LOGGER_NAME)
    if name.startswith(LOGGER_NAME + "."):
        return logging.getLogger(name)
    return logging.getLogger(f"{LOGGER_NAME}.{name}")


def log_progress(
    logger: logging.Logger,
    *,
    estimator: str,
    step: int,
    total: int,
    phase: str = "fit",
    epsilon_spent: float | None = None,
    loss: float | None = None,
    private: bool = True,
) -> None:
    """Log one structured progress record at ``INFO``.

    Parameters
    ----------
    logger : logging.Logger
        A logger of the ``"skdp"`` hierarchy (:func:`get_logger`).
    estimator : str
        The estimator's class name.
    step, total : int
        Steps done and planned in this ``phase``.
    phase : str, default="fit"
        A name for the stage (``"fit"``, ``"critic"``, ``"autoencoder"``, ...).
    epsilon_spent : float or None, default=None
        Epsilon spent so far (a function of the public schedule only). Not shown when
        ``None`` or infinite.
    loss : float or None, default=None
        The training loss. Kept only when ``private=False``: on a private fit it is an
        un-noised statistic of the private rows and is dropped.
    private : bool, default=True
        Whether the fit is differentially private.
    """
    if _QUIET.get() or not logger.isEnabledFor(logging.INFO):
        return
    if private or loss is None or not math.isfinite(float(loss)):
        loss = None
    if epsilon_spent is not None and not math.isfinite(float(epsilon_spent)):
        epsilon_spent = None
    payload = {
        "estimator": str(estimator),
        "phase": str(phase),
        "step": int(step),
        "total": int(total),
        "epsilon_spent": None if epsilon_spent is None else float(epsilon_spent),
        "loss": None if loss is None else float(loss),
    }
    msg = "[%s] %s step %d/%d"
    args: list = [payload["estimator"], payload["phase"], payload["step"], payload["total"]]
    if payload["epsilon_spent"] is not None:
        msg += "  epsilon spent %.4f"
        args.append(payload["epsilon_spent"])
    if payload["loss"] is not None:
        msg += "  loss %.4f (not private)"
        args.append(payload["loss"])
    logger.info(msg, *args, extra={PROGRESS_KEY: payload})


def log_step_progress(
    logger: logging.Logger,
    *,
    estimator: str,
    step: int,
    total: int,
    epsilons,
    losses,
    private: bool,
    phase: str = "fit",
    spent_before: float = 0.0,
) -> None:
    """:func:`log_progress` of an iterative fit from the histories it keeps.

    The record carries the last of ``epsilons`` (the epsilon of the public schedule
    after each step so far) plus ``spent_before`` (what earlier stages of the fit spent),
    and the last of ``losses`` when there is one (dropped by :func:`log_progress` unless
    ``private`` is false).
    """
    log_progress(
        logger,
        estimator=estimator,
        phase=phase,
        step=step,
        total=int(total),
        epsilon_spent=spent_before + epsilons[-1],
        loss=losses[-1] if losses else None,
        private=private,
    )


def _tqdm():
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


class ProgressHandler(logging.Handler):
    """Shows progress records: a bar per phase on a terminal, else plain lines.

    Records without a progress payload are written as plain lines. On a non-terminal
    stream a phase writes at most one line per tenth of its steps (a log file stays
    short). With ``bar="auto"`` a ``tqdm`` bar is used when ``tqdm`` is importable and
    ``stream`` is a terminal; ``bar="text"`` draws a text bar on a terminal instead;
    ``bar=False`` always writes lines.

    Parameters
    ----------
    stream : file-like, default=None
        Where to write (default :data:`sys.stderr`, looked up when writing).
    bar : {"auto", "text"} or False, default="auto"
    width : int, default=30
        Width of the text bar.
    """

    def __init__(self, stream=None, *, bar="auto", width=30, level=logging.INFO):
        super().__init__(level=level)
        self._stream = stream
        self.bar = bar
        self.width = int(width)
        self._bars: dict = {}
        self._last: dict = {}

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr

    def _is_tty(self):
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except ValueError:  # a closed stream
            return False

    def emit(self, record):
        try:
            payload = getattr(record, PROGRESS_KEY, None)
            if payload is None:
                self.stream.write(self.format(record) + "\n")
                self.stream.flush()
                return
            self._show(payload, record)
        except Exception:  # noqa: BLE001 - logging must never break a fit
            self.handleError(record)

    def _show(self, p, record):
        key = (p["estimator"], p["phase"])
        step, total = p["step"], max(1, p["total"])
        tty = self._is_tty()
        tqdm = _tqdm() if (self.bar == "auto" and tty) else None
        if tqdm is not None:
            bar = self._bars.get(key)
            if bar is None:
                bar = tqdm(total=total, desc=f"{p['phase']:>12}", file=self.stream, leave=True)
                self._bars[key] = bar
            bar.update(max(0, step - bar.n))
            post = {}
            if p.get("epsilon_spent") is not None:
                post["eps"] = f"{p['epsilon_spent']:.3g}"
            if p.get("loss") is not None:
                post["loss"] = f"{p['loss']:.4g}"
            if post:
                bar.set_postfix(post, refresh=False)
            if step >= total:
                bar.close()
                del self._bars[key]
            return
        frac = min(1.0, step / total)
        extra = ""
        if p.get("epsilon_spent") is not None:
            extra += f"  eps so far {p['epsilon_spent']:.4g}"
        if p.get("loss") is not None:
            extra += f"  loss {p['loss']:.4g} (not private)"
        if tty and self.bar:
            filled = int(round(frac * self.width))
            text = "#" * filled + "-" * (self.width - filled)
            line = f"\r{p['phase']:>12} [{text}] {step}/{total} steps{extra}"
            self.stream.write(line + ("\n" if step >= total else ""))
        else:
            decile = int(frac * 10)
            if self._last.get(key) == decile:
                return
            self._last[key] = decile
            self.stream.write(f"{p['estimator']} {p['phase']}: {step}/{total} steps{extra}\n")
        self.stream.flush()

    def close(self):
        for bar in self._bars.values():
            bar.close()
        self._bars.clear()
        super().close()


@contextlib.contextmanager
def verbose_handler(verbose, *, logger: logging.Logger | None = None) -> Iterator:
    """Attach a :class:`ProgressHandler` to the ``"skdp"`` logger while ``verbose > 0``.

    Used around an estimator's ``fit``: ``with verbose_handler(self.verbose): ...``.
    Does nothing for ``verbose`` 0/False, or when the logger already has a
    :class:`ProgressHandler` (the command line's own, or an outer fit's). Lowers the
    logger's level to ``INFO`` for the duration if it is higher, and restores it.

    Parameters
    ----------
    verbose : int or bool
        The estimator's ``verbose``.
    logger : logging.Logger or None, default=None
        Where to attach (default: the ``"skdp"`` logger).

    Yields
    ------
    ProgressHandler or None
        The attached handler, or ``None`` when none was attached.
    """
    logger = logger if logger is not None else logging.getLogger(LOGGER_NAME)
    if not verbose or _QUIET.get() or any(isinstance(h, ProgressHandler) for h in logger.handlers):
        yield None
        return
    handler = ProgressHandler()
    old_level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        handler.close()
