"""Differentially private accuracy (Lantz 2016, §7.2.2).

Neighbouring relation: **replace one row**; the number of rows is public.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.utils import check_consistent_length

from skdp.base import _shared_constraints
from skdp.mechanisms import (
    add_geometric,
)
from skdp.metrics._checks import (
    _check_ledger,
)
from skdp.utils._random import release_rng
from skdp.utils._rowsum import any_dask, as_1d, n_rows, row_sum
from skdp.utils._sklearn_compat import validate_params
from skdp.utils.validation import check_finite, check_privacy_params, column_or_1d

__all__ = ["dp_accuracy_score"]


@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def dp_accuracy_score(y_true, y_pred, *, epsilon, delta=0.0, random_state=None, ledger=None):
    """Differentially private accuracy (fraction of correct predictions).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (any number of classes). A ``dask.array.Array`` or
        ``dask.dataframe.Series`` is counted partition by partition
        (:doc:`/dask`); the release is the same as for the same labels in memory.
    y_pred : array-like of shape (n_samples,)
        Predicted labels (in memory or Dask, as ``y_true``).
    epsilon : float
        Total privacy loss of this call (> 0; ``math.inf`` returns the exact value).
    delta : float, default=0.0
        Accepted for a uniform signature; the Laplace mechanism is pure DP, so the call
        spends ``(epsilon, 0)`` whatever ``delta`` is.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise. ``None`` draws fresh OS entropy on every call.
    ledger : PrivacyLedger, optional
        If given, ``ledger.spend(epsilon, 0.0)`` is called after the labels are
        validated and before the noisy count is drawn (a refused spend releases nothing).

    Returns
    -------
    score : float
        The noisy accuracy, clamped to [0, 1].

    Notes
    -----
    Neighbouring relation: replace one row, ``N`` public (as for the other scorers).
    Replacing a row changes the number of correct predictions by at
    most one (sensitivity 1); the geometric mechanism adds two-sided geometric noise
    ``G(epsilon)`` to that count (Ghosh, Roughgarden and Sundararajan 2009), and the
    noisy count is divided by the public ``N``: the discrete counterpart of
    ``Laplace(1 / (N epsilon))`` on the accuracy (Lantz 2016, §7.2.2). Pure
    ``epsilon``-DP, exact guarantee; division and clamping to [0, 1] are
    post-processing. Floating point: exact -- the noise is an integer drawn in integer
    arithmetic (Canonne, Kamath and Steinke 2020), so no floating-point gap (Mironov
    2012) can tell neighbours apart.

    References
    ----------
    .. [1] C. Dwork, F. McSherry, K. Nissim, A. Smith. "Calibrating noise to sensitivity
       in private data analysis". TCC 2006.

    Examples
    --------
    >>> from skdp.metrics import dp_accuracy_score
    >>> acc = dp_accuracy_score([0, 1, 1, 0] * 250, [0, 1, 0, 0] * 250, epsilon=1.0,
    ...                         random_state=0)
    >>> abs(acc - 0.75) < 0.05
    True
    """
    if any_dask(y_true, y_pred):  # counted per partition; the labels stay on the workers
        yt, yp = as_1d(y_true, "y_true"), as_1d(y_pred, "y_pred")
        N = n_rows(yt)
        if n_rows(yp) != N:
            raise ValueError("y_true and y_pred have inconsistent numbers of samples")
    else:
        yt = column_or_1d(y_true, input_name="y_true")
        yp = column_or_1d(y_pred, input_name="y_pred")
        check_consistent_length(yt, yp)
        N = yt.shape[0]
    if N == 0:
        raise ValueError("y_true is empty")
    if not any_dask(yt, yp):
        _check_labels(yt, yp)
    epsilon, delta = check_privacy_params(epsilon, delta)
    rng = release_rng(
        random_state,
        tag="dp_accuracy_score",
        params={"epsilon": epsilon, "delta": delta},
        data=(yt, yp),
        order_invariant=True,
    )
    _check_ledger(ledger)
    # exact, in blocks or per partition; on Dask the labels are validated in this pass,
    # so the ledger is charged after it: a refused input spends nothing
    correct = int(row_sum(_correct_block, yt, yp) or 0)
    if ledger is not None:
        ledger.spend(epsilon, 0.0, label="dp_accuracy_score")
    if math.isinf(epsilon):
        return correct / N
    noisy = int(add_geometric(correct, sensitivity=1, epsilon=epsilon, rng=rng))
    return float(np.clip(noisy / N, 0.0, 1.0))


def _check_labels(yt, yp):
    if yt.dtype.kind in "fc":
        check_finite(yt, name="y_true")
    if yp.dtype.kind in "fc":
        check_finite(yp, name="y_pred")


def _correct_block(yt, yp):
    """Number of correct predictions in one block of rows (labels validated here)."""
    yt, yp = np.asarray(yt), np.asarray(yp)
    _check_labels(yt, yp)
    return int(np.count_nonzero(yt == yp))
