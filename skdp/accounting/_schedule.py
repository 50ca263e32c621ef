"""Default DP-SGD schedules (batch size and step count) from public quantities only.

Shared by the DP-SGD estimators (:class:`~skdp.density.DPFlowDensity`,
:class:`~skdp.synthesis.DPGANSynthesizer`) when ``batch_size``/``n_iter`` are ``None``.
Everything here reads ``n`` (public under add/remove, see :ref:`neighbouring-relation`),
the budget, the number of model parameters and constants: no private value.
"""

from __future__ import annotations

import math

__all__ = ["SCHEDULE_RULE", "default_batch_size", "default_n_iter"]

#: The constants of the rule (documented in the estimators' docstrings).
SCHEDULE_RULE = {
    "min_batch": 64,
    "max_batch": 1024,
    "min_steps": 100,
    "work_budget": 2**32,
}


def default_batch_size(n):
    """``min(n, clip(2 ** round(log2(sqrt(8 n))), 64, 1024))``: about ``sqrt(8 n)``,
    a power of two (64 at ``n <= 724``, 256 at ``n = 9,000``, 1024 from ``n = 92,000``)."""
    r = SCHEDULE_RULE
    b = 2 ** round(math.log2(math.sqrt(8.0 * max(int(n), 1))))
    return int(min(int(n), min(r["max_batch"], max(r["min_batch"], b))))


def default_n_iter(n, batch_size, *, epochs, n_parameters, step_cost=1.0):
    """Number of DP-SGD steps from public quantities: ``max(min_steps, min(ceil(epochs /
    q), T_work))``.

    ``q = min(1, batch_size / n)``; ``T_work = work_budget / (step_cost * batch_size *
    n_parameters)`` bounds the compute (``work_budget = 2**32`` multiply-adds of
    per-record gradients, about half a minute on one core; ``step_cost`` counts the
    per-record passes of one step); ``min_steps = 100``.

    The count does not depend on ``epsilon``: the noise multiplier is calibrated to it,
    and it falls as the budget grows, so a larger budget never gets a noisier schedule.
    A cap on the noise multiplier (fewer steps at a small budget) was measured on the
    simulated repeated-measures data (:func:`skdp.datasets.make_nonlinear_repeated_measures`,
    n = 2,000 and 9,000, epsilon 0.3 to 10) and made the held-out log-likelihood
    worse wherever it bound (caps 0.8, 1.5, 2.5 and 8), so there is none.
    """
    r = SCHEDULE_RULE
    n, batch_size = int(n), int(batch_size)
    q = min(1.0, batch_size / n)
    t = math.ceil(float(epochs) / q)
    t_work = int(r["work_budget"] // max(1.0, float(step_cost) * batch_size * n_parameters))
    return int(max(r["min_steps"], min(t, t_work)))
