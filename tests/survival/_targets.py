"""Survival data for the project-wide tests that iterate every discovered estimator.

The survival estimators take a structured ``(event, time)`` target: the curves fit it
alone (``fit(y)``), the Cox model with features (``fit(X, y)``). Tests that build
classification or regression data call :func:`survival_data` for them.
"""

from __future__ import annotations

import inspect

import numpy as np


def is_survival(est) -> bool:
    """An estimator (or class) of :mod:`skdp.survival`."""
    cls = est if isinstance(est, type) else type(est)
    return cls.__module__.startswith("skdp.survival.")


def is_curve(est) -> bool:
    """A survival curve: ``fit(y)`` without features."""
    cls = est if isinstance(est, type) else type(est)
    return is_survival(cls) and "X" not in inspect.signature(cls.fit).parameters


def survival_target(est, X, seed=0):
    """``(event, time)`` for ``X``'s rows (times in ``[0, 10]``), or ``(event type,
    time)`` for the competing-risks curve (an ``event_types`` parameter)."""
    from skdp.survival import make_competing_risks_target, make_survival_target

    rng = np.random.default_rng(seed + 1)
    n = X.shape[0]
    time = np.clip(5.0 + 4.0 * X[:, 0] + rng.uniform(-1.0, 1.0, n), 0.0, 10.0)
    if "event_types" in est.get_params():
        return make_competing_risks_target(rng.integers(0, 3, n), time)
    return make_survival_target(rng.random(n) < 0.7, time)


def survival_data(est, n=60, seed=0):
    """``(X, y)`` for a survival estimator; ``X`` is ``None`` for a curve."""
    X = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, 2))
    return (None if is_curve(est) else X), survival_target(est, X, seed)


def survival_neighbour(y):
    """``y`` with its last row replaced (another event status and time)."""
    y2 = y.copy()
    first, second = y.dtype.names
    status = y2[first][-1]
    y2[first][-1] = (not status) if y.dtype[0].kind == "b" else (0 if status else 1)
    y2[second][-1] = 10.0 - y2[second][-1] / 2.0
    return y2
