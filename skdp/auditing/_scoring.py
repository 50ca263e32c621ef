"""Membership scores of examples under a fitted estimator, from its public methods only.

Higher score = "more likely a training member". The attacks never read private
attributes: they use what a user of the released model can call.

``"auto"`` picks, in order:

* ``predict_proba`` (classifiers): the logit-scaled true-label confidence
  ``log p_y - log(1 - p_y)`` (Carlini et al. 2022; monotone in ``-loss``);
* ``score_samples`` (densities, synthesizers with a density): the log-likelihood;
* ``predict`` with ``y`` (regressors): minus the squared error;
* ``transform`` (clusterers exposing distances), else the public fitted
  ``cluster_centers_`` of a clusterer: minus the distance to the nearest centre;
* ``sample`` (synthesizers without a density): minus the distance to the nearest of
  ``n_synthetic`` released synthetic rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["membership_scores", "resolve_scorer"]

_EPS_P = 1e-12


def _proba_logit(estimator, X, y):
    proba = np.asarray(estimator.predict_proba(X), dtype=float)
    classes = list(getattr(estimator, "classes_", range(proba.shape[1])))
    index = {c: i for i, c in enumerate(classes)}
    try:
        cols = np.array([index[v] for v in np.asarray(y).ravel().tolist()])
    except KeyError:
        raise ValueError("y holds a label the estimator does not know") from None
    p = np.clip(proba[np.arange(len(cols)), cols], _EPS_P, 1 - _EPS_P)
    return np.log(p) - np.log1p(-p)


def _score_samples(estimator, X, y):
    return np.asarray(estimator.score_samples(X), dtype=float)


def _neg_sq_error(estimator, X, y):
    pred = np.asarray(estimator.predict(X), dtype=float).reshape(len(X), -1)
    target = np.asarray(y, dtype=float).reshape(len(X), -1)
    return -np.sum((pred - target) ** 2, axis=1)


def _neg_centre_distance(estimator, X, y):
    return -np.min(np.asarray(estimator.transform(X), dtype=float), axis=1)


def _neg_fitted_centre_distance(estimator, X, y):
    centres = np.asarray(estimator.cluster_centers_, dtype=float)
    Xa = np.asarray(X, dtype=float).reshape(len(X), -1)
    d2 = ((Xa[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
    return -np.sqrt(d2.min(axis=1))


def _make_sample_distance(n_synthetic, seed):
    def _neg_synthetic_distance(estimator, X, y):
        synth = estimator.sample(n_synthetic, random_state=seed)
        synth = np.asarray(synth[0] if isinstance(synth, tuple) else synth, dtype=float)
        Xa = np.asarray(X, dtype=float).reshape(len(X), -1)
        synth = synth.reshape(len(synth), -1)
        d2 = ((Xa[:, None, :] - synth[None, :, :]) ** 2).sum(-1)
        return -np.sqrt(d2.min(axis=1))

    return _neg_synthetic_distance


def _is_clusterer(estimator):
    try:
        from sklearn.base import is_clusterer

        return bool(is_clusterer(estimator))
    except (ImportError, TypeError, AttributeError):
        return False


def resolve_scorer(estimator, y=None, score="auto", *, n_synthetic=1000, seed=0):
    """Return ``f(fitted_estimator, X, y) -> scores`` (higher = member) for ``score``.

    ``score`` is ``"auto"``, one of ``"predict_proba"``, ``"score_samples"``,
    ``"predict"``, ``"transform"``, ``"cluster_centers"``, ``"sample"``, or a callable
    with that signature.
    """
    if callable(score):
        return score
    table = {
        "predict_proba": _proba_logit,
        "score_samples": _score_samples,
        "predict": _neg_sq_error,
        "transform": _neg_centre_distance,
        "cluster_centers": _neg_fitted_centre_distance,
        "sample": _make_sample_distance(n_synthetic, seed),
    }
    if score != "auto":
        if score not in table:
            raise ValueError(f"unknown score {score!r}; use 'auto', a callable or {sorted(table)}")
        return table[score]
    if y is not None and hasattr(estimator, "predict_proba"):
        return _proba_logit
    if hasattr(estimator, "score_samples"):
        return _score_samples
    if y is not None and hasattr(estimator, "predict"):
        return _neg_sq_error
    if hasattr(estimator, "transform"):
        return _neg_centre_distance
    if getattr(estimator, "_estimator_type", None) == "clusterer" or _is_clusterer(estimator):
        return _neg_fitted_centre_distance
    if hasattr(estimator, "sample"):
        return table["sample"]
    raise ValueError(
        f"{type(estimator).__name__} exposes none of predict_proba, score_samples, predict, "
        "transform, cluster_centers_ or sample: pass score=callable(estimator, X, y)"
    )


def membership_scores(estimator, X, y=None, score="auto"):
    """Membership scores of the rows of ``X`` (and ``y``) under a *fitted* estimator."""
    return np.asarray(resolve_scorer(estimator, y, score)(estimator, X, y), dtype=float).ravel()
