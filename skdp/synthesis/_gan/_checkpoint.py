"""DP checkpoint selection of the conditional GAN (Beaulieu-Jones et al. 2019, corrected).

Snapshots of the generator at evenly spaced critic steps are scored by the number of
private training rows that a classifier trained on their synthetic rows labels correctly
(a count: adding a row can only raise every candidate's count by at most 1, removing one
only lower it, so the utility has sensitivity 1 and is monotone; a patient of at most
``max_rows_per_group`` rows moves it by at most that many). The top ``k`` per
scorer are chosen by report-noisy-max peeling (:func:`skdp.mechanisms.report_noisy_max`,
Dwork & Roth 2014, §3.3), each round at ``epsilon / (k * n_scorers)``: the rounds compose
sequentially to ``epsilon``. With ``secure_mode`` each round adds exact discrete Laplace
noise of scale ``sensitivity / eps_r`` from ``os.urandom`` to the integer utilities and
reports the first maximiser (``report_noisy_max(..., secure_mode=True)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from skdp.mechanisms import report_noisy_max

__all__ = ["SCORERS", "CheckpointSelection", "checkpoint_steps", "select_checkpoints"]

#: Classifiers a checkpoint can be scored with.
SCORERS = ("logistic_regression", "random_forest")


def _positive_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class CheckpointSelection:
    """DP checkpoint selection of :class:`~skdp.synthesis.DPGANSynthesizer` (Beaulieu-Jones
    et al. 2019).

    Pass an instance as ``checkpoint_selection=`` of a conditional (``"acgan"``) model.
    Snapshots of the generator at ``n_checkpoints`` evenly spaced critic steps are scored
    by the number of private training rows that a classifier trained on ``n_samples`` of
    their synthetic rows labels correctly; the ``top_k`` best per scorer are chosen by
    report-noisy-max peeling at ``0.2 * epsilon`` of the estimator's budget in total, and
    ``sample`` draws evenly from the chosen generators. The object is immutable and
    compares by value, so it survives :func:`sklearn.base.clone` and ``get_params``.

    Parameters
    ----------
    n_checkpoints : int, default=10
        Generator snapshots taken (at distinct steps; more than the critic steps raises at
        ``fit``).
    top_k : int, default=5
        Snapshots chosen per scorer (at most ``n_checkpoints``).
    scorers : tuple of str, default=("logistic_regression",)
        Any of ``"logistic_regression"`` and ``"random_forest"`` (the paper used both).
    n_samples : int, default=1000
        Synthetic rows generated to train each scorer.

    Examples
    --------
    >>> from skdp.synthesis import CheckpointSelection
    >>> sel = CheckpointSelection(top_k=2, scorers=("logistic_regression", "random_forest"))
    >>> sel == CheckpointSelection(top_k=2, scorers=["logistic_regression", "random_forest"])
    True
    """

    n_checkpoints: int = 10
    top_k: int = 5
    scorers: tuple = ("logistic_regression",)
    n_samples: int = 1000

    def __post_init__(self):
        n = _positive_int("n_checkpoints", self.n_checkpoints, 1)
        k = _positive_int("top_k", self.top_k, 1)
        m = _positive_int("n_samples", self.n_samples, 2)
        if k > n:
            raise ValueError("top_k must be <= n_checkpoints")
        scorers = (self.scorers,) if isinstance(self.scorers, str) else tuple(self.scorers)
        if not scorers or any(s not in SCORERS for s in scorers):
            raise ValueError(f"scorers must be a non-empty tuple of {SCORERS}")
        for name, value in (("n_checkpoints", n), ("top_k", k), ("n_samples", m)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "scorers", scorers)


def checkpoint_steps(steps, n_checkpoints):
    """The (distinct) critic steps at which the generator is snapshotted."""
    n = int(n_checkpoints)
    return sorted({max(1, int(round(steps * (i + 1) / n))) for i in range(n)})


def select_checkpoints(
    checkpoints,
    generate,
    Z,
    codes,
    epsilon,
    rng,
    *,
    scorers,
    top_k,
    n_samples,
    sensitivity=1.0,
    secure_mode=False,
):
    """Report-noisy-max peeling over ``checkpoints``.

    Parameters
    ----------
    checkpoints : list of (int, torch.nn.Module)
        ``(critic step, generator snapshot)``.
    generate : callable
        ``generate(generator, m, rng) -> (encoded rows, label codes)`` (no real data).
    Z : ndarray of shape (n, width)
        The encoded private rows.
    codes : ndarray of int
        Their label codes.
    epsilon : float
        Budget of the whole selection (``inf``: exact top-k, a non-private fit).
    rng : numpy.random.Generator
    scorers : tuple of str
        Among :data:`SCORERS`.
    top_k : int
        Checkpoints chosen per scorer.
    n_samples : int
        Synthetic rows generated to train each scorer.
    sensitivity : float, default=1.0
        Of each utility (a count of rows): 1 per row, ``k`` per patient.
    secure_mode : bool, default=False
        The rounds' noise: exact discrete Laplace from ``os.urandom``
        (``report_noisy_max(..., secure_mode=True)``) instead of floating-point
        Laplace from ``rng`` (``rng`` still generates the scorers' synthetic rows).

    Returns
    -------
    generators : list of torch.nn.Module
    selected : list of (int, str)
        ``(checkpoint step, scorer)`` of each chosen generator.
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    scorers = tuple(scorers)
    k = int(top_k)
    if len(checkpoints) < k:
        raise ValueError("fewer distinct checkpoints than top_k: train for more steps")
    eps_r = epsilon / (k * len(scorers)) if epsilon > 0 else math.inf
    utilities = np.zeros((len(checkpoints), len(scorers)))
    for m, (_, gen) in enumerate(checkpoints):
        Xs, ys = generate(gen, int(n_samples), rng)
        for s, name in enumerate(scorers):
            seed = int(rng.integers(0, 2**31 - 1))
            if len(np.unique(ys)) < 2:
                pred = np.full(len(codes), ys[0])
            else:
                clf = (
                    LogisticRegression(max_iter=500)
                    if name == "logistic_regression"
                    else RandomForestClassifier(n_estimators=50, random_state=seed)
                )
                clf.fit(Xs, ys)
                pred = clf.predict(Z)
            utilities[m, s] = float(np.sum(pred == codes))  # a count: sensitivity 1
    gens, selected = [], []
    for s, name in enumerate(scorers):
        chosen: list[int] = []
        for _ in range(k):
            i = report_noisy_max(
                utilities[:, s],
                epsilon=eps_r,
                sensitivity=sensitivity,
                rng=rng,
                monotonic=True,
                exclude=chosen or None,
                secure_mode=secure_mode,
            )
            chosen.append(i)
            selected.append((int(checkpoints[i][0]), name))
            gens.append(checkpoints[i][1])
    return gens, selected
