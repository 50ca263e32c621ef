"""DP checkpoint selection of the conditional GAN (Beaulieu-Jones et al. 2019, corrected).

Snapshots of the generator at evenly spaced critic steps are scored by the number of
private training rows that a classifier trained on their synthetic rows labels correctly
(a count: it changes by at most 1 when one row is added or removed, and only upwards or
downwards, so it is monotone). The top ``k`` per scorer are chosen by report-noisy-max
peeling (:func:`skdp.mechanisms.report_noisy_max`, Dwork & Roth 2014, §3.3), each round at
``epsilon / (k * n_scorers)``: the rounds compose sequentially to ``epsilon``.
"""

from __future__ import annotations

import math

import numpy as np

from skdp.mechanisms import report_noisy_max

__all__ = ["SCORERS", "checkpoint_steps", "select_checkpoints"]

#: Classifiers a checkpoint can be scored with.
SCORERS = ("logistic_regression", "random_forest")


def checkpoint_steps(steps, n_checkpoints):
    """The (distinct) critic steps at which the generator is snapshotted."""
    n = int(n_checkpoints)
    return sorted({max(1, int(round(steps * (i + 1) / n))) for i in range(n)})


def select_checkpoints(checkpoints, generate, Z, codes, epsilon, rng, *, scorers, top_k, n_samples):
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
                sensitivity=1.0,
                rng=rng,
                monotonic=True,
                exclude=chosen or None,
            )
            chosen.append(i)
            selected.append((int(checkpoints[i][0]), name))
            gens.append(checkpoints[i][1])
    return gens, selected
