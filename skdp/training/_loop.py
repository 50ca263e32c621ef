"""The training loop of every DP-SGD fit.

:func:`run_steps` runs the steps of :func:`~skdp.training.train_dpsgd` (hence
:class:`~skdp.density.DPFlowDensity`), of both phases of
:class:`~skdp.synthesis.DPGANSynthesizer` and of :class:`~skdp.sampling.DPFlowVI`, whose
step hook draws the step's Monte Carlo sample and computes its free-energy terms. The loop
keeps their shared conventions: the log cadence (every ``max(1, n_iter // 50)`` steps and
the last), the DP-SGD epsilon spent so far at those steps (``inf`` for a non-private fit)
and the progress records.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["log_every", "run_steps"]


def log_every(n_iter: int) -> int:
    """The log cadence of a run of ``n_iter`` steps: every ``max(1, n_iter // 50)``."""
    return max(1, int(n_iter) // 50)


def run_steps(
    step: Callable[[int], object],
    n_iter: int,
    *,
    epsilon: Callable[[], float] | None = None,
    history: dict | None = None,
    every: int | None = None,
    on_log: Callable[[int], object] | None = None,
    progress: Callable[[int], object] | None = None,
    progress_every: int | None = None,
) -> dict | None:
    """Run ``step(t)`` for ``t = 1, ..., n_iter``; record and report at the logged steps.

    Parameters
    ----------
    step : callable ``(t) -> any``
        One training step: one accounted DP-SGD release applied to the module (and what
        the caller does around it: the VI's fresh Monte Carlo draws and per-step
        objective, the GAN's generator step and checkpoints).
    n_iter : int
        Number of steps.
    epsilon : callable ``() -> float`` or None
        The DP-SGD epsilon spent so far; ``None`` for a non-private run (``inf``).
    history : dict or None
        ``history["step"]`` and ``history["epsilon"]`` are appended to at the logged steps
        (``None``: nothing is recorded).
    every : int or None
        The log cadence (default :func:`log_every`); the last step is always logged.
    on_log : callable ``(t) -> any``, optional
        Called at each logged step, after the epsilon is recorded (further curves).
    progress : callable ``(t) -> any``, optional
        The progress record, called after ``on_log`` every ``progress_every`` steps
        (default: the logged steps) and at the last.
    progress_every : int or None

    Returns
    -------
    history : dict or None
    """
    n_iter = int(n_iter)
    every = log_every(n_iter) if every is None else max(1, int(every))
    progress_every = every if progress_every is None else max(1, int(progress_every))
    for t in range(1, n_iter + 1):
        step(t)
        if t % every == 0 or t == n_iter:
            if history is not None:
                history["step"].append(t)
                history["epsilon"].append(epsilon() if epsilon is not None else math.inf)
            if on_log is not None:
                on_log(t)
        if progress is not None and (t % progress_every == 0 or t == n_iter):
            progress(t)
    return history
