"""Positive and negative controls for the audits: toy mechanisms with a known epsilon.

They behave like skdp estimators (``fit``, ``score_samples``/``predict_proba``,
``epsilon``, ``random_state``), so every audit runs on them unchanged:

* :class:`RandomizedResponseRelease` -- exactly ``epsilon``-DP; the audits' bounds must
  stay below ``epsilon`` at their confidence and approach it with enough evidence.
* :class:`LaplaceCountRelease` -- a Laplace histogram over a public id universe;
  ``noise_factor < 1`` simulates a plumbing bug (a too-small noise term).
* :class:`MemorizingDensity`, :class:`MemorizingClassifier` -- non-private models that
  memorise their training rows; the audits' bounds must be large.

Data convention of the two DP controls: ``X`` is an integer column of record ids in
``[0, n_ids)`` (the id universe is public, as the cells of a histogram are).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, DensityMixin
from sklearn.utils.multiclass import check_classification_targets

from skdp.base import DPEstimatorMixin
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import Interval, check_is_fitted
from skdp.utils.validation import validate_data

__all__ = [
    "LaplaceCountRelease",
    "MemorizingClassifier",
    "MemorizingDensity",
    "RandomizedResponseRelease",
]


def _ids(estimator, X, reset):
    X = validate_data(estimator, X, reset=reset, dtype=None, ensure_min_samples=1)
    if X.shape[1] != 1:
        raise ValueError("X must hold one column of integer record ids")
    ids = np.asarray(X[:, 0])
    if not np.all(np.isfinite(ids.astype(float))) or np.any(ids != np.round(ids.astype(float))):
        raise ValueError("column 0 (record id) must hold integers")
    ids = ids.astype(np.int64)
    if ids.min() < 0 or ids.max() >= estimator.n_ids:
        raise ValueError("column 0 (record id) is outside [0, n_ids)")
    return ids


def _fit_ids(estimator, X):
    """The start of a private control's ``fit``: its parameters and ``epsilon`` checked,
    then the record ids of ``X``; ``(epsilon, ids)``."""
    estimator._validate_params()
    eps, _ = estimator._check_privacy_params()
    return eps, _ids(estimator, X, reset=True)


class RandomizedResponseRelease(DPEstimatorMixin, DensityMixin, BaseEstimator):
    """Release, for every id of a public universe, a randomized-response membership bit.

    Parameters
    ----------
    epsilon : float, default=1.0
        Each released bit is correct with probability ``e^eps / (1 + e^eps)``.
    n_ids : int, default=1000
        Size of the public id universe.
    random_state : None, int or Generator, default=None

    Attributes
    ----------
    bits_ : ndarray of shape (n_ids,)
        The released (noisy) bits.
    epsilon_spent_, delta_spent_, privacy_guarantee_

    Notes
    -----
    Add/remove one row changes at most one membership bit; randomized response on one
    bit with flip probability ``1 / (1 + e^eps)`` is exactly ``eps``-DP (tight), so the
    audits should approach, and never exceed, ``epsilon``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import RandomizedResponseRelease
    >>> rr = RandomizedResponseRelease(epsilon=1.0, n_ids=10, random_state=0)
    >>> rr.fit(np.array([[1], [2]])).score_samples(np.array([[1], [5]])).shape
    (2,)
    """

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        "n_ids": [Interval(Integral, 1, None, closed="left")],
        **DPEstimatorMixin._common_constraints("random_state"),
    }

    def __init__(self, *, epsilon=1.0, n_ids=1000, random_state=None):
        self.epsilon = epsilon
        self.n_ids = n_ids
        self.random_state = random_state

    def fit(self, X, y=None):
        eps, ids = _fit_ids(self, X)
        member = np.zeros(self.n_ids, dtype=bool)
        member[ids] = True
        p_flip = 1.0 / (1.0 + math.exp(eps)) if math.isfinite(eps) else 0.0
        flip = make_rng(self.random_state).random(self.n_ids) < p_flip
        self.bits_ = (member ^ flip).astype(float)
        return self._record_privacy_spent(eps, 0.0)

    def score_samples(self, X):
        check_is_fitted(self)
        return self.bits_[_ids(self, X, reset=False)]


class LaplaceCountRelease(DPEstimatorMixin, DensityMixin, BaseEstimator):
    """Noisy per-id counts: a Laplace histogram over a public id universe.

    Parameters
    ----------
    epsilon : float, default=1.0
    n_ids : int, default=1000
    noise_factor : float, default=1.0
        Multiplies the calibrated Laplace scale ``1/epsilon``. **Testing only**: a
        value below 1 breaks the guarantee (true epsilon = ``epsilon / noise_factor``)
        and stands in for a plumbing bug the audits must catch.
    random_state : None, int or Generator, default=None

    Attributes
    ----------
    counts_ : ndarray of shape (n_ids,)
        Noisy counts.
    epsilon_spent_, delta_spent_, privacy_guarantee_

    Notes
    -----
    Add/remove one row changes one count by 1 (L1 sensitivity 1); Laplace noise of
    scale ``1/epsilon`` per cell is ``epsilon``-DP (Dwork et al. 2006), exact.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import LaplaceCountRelease
    >>> m = LaplaceCountRelease(epsilon=1.0, n_ids=5, random_state=0).fit([[0], [0], [3]])
    >>> m.counts_.shape
    (5,)
    """

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        "n_ids": [Interval(Integral, 1, None, closed="left")],
        "noise_factor": [Interval(Real, 0, None, closed="left")],
        **DPEstimatorMixin._common_constraints("random_state"),
    }

    def __init__(self, *, epsilon=1.0, n_ids=1000, noise_factor=1.0, random_state=None):
        self.epsilon = epsilon
        self.n_ids = n_ids
        self.noise_factor = noise_factor
        self.random_state = random_state

    def fit(self, X, y=None):
        eps, ids = _fit_ids(self, X)
        counts = np.bincount(ids, minlength=self.n_ids).astype(float)
        scale = self.noise_factor / eps if math.isfinite(eps) else 0.0
        self.counts_ = counts + make_rng(self.random_state).laplace(0.0, 1.0, self.n_ids) * scale
        return self._record_privacy_spent(eps, 0.0)

    def score_samples(self, X):
        check_is_fitted(self)
        return self.counts_[_ids(self, X, reset=False)]


def _squared_distances(estimator, X):
    """Squared Euclidean distances from each row of ``X`` to each memorised training
    row of a fitted control, shape ``(len(X), n_train)``."""
    check_is_fitted(estimator)
    X = validate_data(estimator, X, reset=False).astype(float)
    return ((X[:, None, :] - estimator.rows_[None, :, :]) ** 2).sum(-1)


class MemorizingDensity(DensityMixin, BaseEstimator):
    """Non-private control: ``score_samples(x)`` is minus the distance to the nearest
    training row (0 on members). Claims no privacy (``epsilon_spent_ = inf``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import MemorizingDensity
    >>> MemorizingDensity().fit([[0.0], [1.0]]).score_samples([[1.0], [3.0]]).tolist()
    [-0.0, -2.0]
    """

    def __init__(self, *, random_state=None):
        self.random_state = random_state

    def fit(self, X, y=None):
        self.rows_ = validate_data(self, X, reset=True).astype(float)
        self.epsilon_spent_ = math.inf
        return self

    def score_samples(self, X):
        d2 = _squared_distances(self, X)
        return -np.sqrt(d2.min(axis=1))

    def score(self, X, y=None):
        """Mean of :meth:`score_samples`."""
        return float(np.mean(self.score_samples(X)))


class MemorizingClassifier(ClassifierMixin, BaseEstimator):
    """Non-private control: a 1-nearest-neighbour classifier whose confidence in the
    neighbour's label decays with the distance (0.99 on a training row).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import MemorizingClassifier
    >>> clf = MemorizingClassifier().fit([[0.0], [1.0]], [0, 1])
    >>> clf.predict_proba([[1.0]]).round(2).tolist()
    [[0.01, 0.99]]
    """

    def __init__(self, *, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        X, y = validate_data(self, X, y, reset=True)
        check_classification_targets(y)
        self.classes_, self.y_ = np.unique(y, return_inverse=True)
        self.rows_ = X.astype(float)
        self.epsilon_spent_ = math.inf
        return self

    def predict_proba(self, X):
        d2 = _squared_distances(self, X)
        nn = d2.argmin(axis=1)
        k = len(self.classes_)
        conf = 1.0 / k + (0.99 - 1.0 / k) * np.exp(-np.sqrt(d2[np.arange(len(d2)), nn]))
        proba = np.tile(((1.0 - conf) / max(k - 1, 1))[:, None], (1, k))
        proba[np.arange(len(d2)), self.y_[nn]] = conf
        return proba

    def predict(self, X):
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
