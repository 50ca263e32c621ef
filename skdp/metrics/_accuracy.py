"""Differentially private accuracy (Lantz 2016, §7.2.2).

Neighbouring relation: **replace one row**; the number of rows is public. With
``groups``: add or remove one patient with all their rows (:doc:`/patients`); the number
of rows is then private and not used.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from sklearn.utils import check_consistent_length

from skdp.base import _shared_constraints
from skdp.mechanisms import (
    add_geometric,
)
from skdp.mechanisms.sensitivity import count_sensitivity, group_sensitivity
from skdp.metrics._checks import (
    _check_ledger,
)
from skdp.utils._docstrings import insert_docs
from skdp.utils._groups import (
    DASK_GROUPS_IN_MEMORY,
    GROUPS_HELP,
    bound_contributions,
    check_dask_groups,
    check_groups,
    check_max_rows_per_group,
)
from skdp.utils._groups_dask import bound_dask_rows
from skdp.utils._random import release_rng
from skdp.utils._rowsum import any_dask, as_1d_pair, row_sum
from skdp.utils._sklearn_compat import validate_params
from skdp.utils.validation import check_finite, check_privacy_params, column_or_1d

__all__ = ["dp_accuracy_score"]


@insert_docs
@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def dp_accuracy_score(
    y_true,
    y_pred,
    *,
    epsilon,
    delta=0.0,
    random_state=None,
    ledger=None,
    groups=None,
    max_rows_per_group=None,
):
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
        validated and before the noisy count is drawn (a refused spend releases nothing);
        with ``groups`` the spend is per patient (``unit="group"``).
    groups : array-like of shape (n_samples,), default=None
        The patient (or other privacy unit) of each row, as in scikit-learn's
        ``GroupKFold``. With ``groups`` the guarantee is per patient: each patient keeps
        at most ``max_rows_per_group`` rows (chosen at random) and the sensitivity is
        that many rows' (Notes). In memory only.
    max_rows_per_group : int, default=None
        The public number of rows one patient may contribute (from the visit schedule
        or the study protocol, never from the data). Required with ``groups``.

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

    With ``groups``: neighbouring relation add or remove one patient with all their
    rows (:doc:`/patients`). Each patient keeps at most ``k = max_rows_per_group``
    rows, chosen uniformly at random inside the mechanism (never the first ``k``: the
    order of the rows is data). The number of kept rows is then private (a patient moves
    it by up to ``k``), so it is not used: the counts of correct and of wrong
    predictions are both released, each with noise ``G(epsilon / k)`` (a patient adds
    at most ``k`` rows to the two together: L1 sensitivity ``k`` of the pair,
    :func:`skdp.mechanisms.sensitivity.group_sensitivity`), and the accuracy is their
    ratio, clamped to [0, 1] (post-processing). ``epsilon`` holds per patient. An input
    without rows (an empty cross-validation fold) releases noise only.

    References
    ----------
    .. [1] {ref_dwork2006}

    Examples
    --------
    >>> from skdp.metrics import dp_accuracy_score
    >>> acc = dp_accuracy_score([0, 1, 1, 0] * 250, [0, 1, 0, 0] * 250, epsilon=1.0,
    ...                         random_state=0)
    >>> abs(acc - 0.75) < 0.05
    True

    Per patient (here 250 patients with 4 rows each):

    >>> patient = [i // 4 for i in range(1000)]
    >>> acc = dp_accuracy_score([0, 1, 1, 0] * 250, [0, 1, 0, 0] * 250, epsilon=1.0,
    ...                         groups=patient, max_rows_per_group=4, random_state=0)
    >>> abs(acc - 0.75) < 0.05
    True
    """
    yt, yp, N, codes, k, rng, epsilon = _checked_pair(
        y_true,
        y_pred,
        (groups, max_rows_per_group),
        (epsilon, delta, random_state, ledger),
        tag="dp_accuracy_score",
        block=_correct_block,
    )
    # exact, in blocks or per partition; on Dask the labels are validated in this pass,
    # so the ledger is charged after it: a refused input spends nothing
    correct = int(row_sum(_correct_block, yt, yp) or 0)
    if ledger is not None:
        _spend(ledger, epsilon, "dp_accuracy_score", codes)
    if codes is not None:
        return _patient_accuracy(correct, N - correct, k, epsilon, rng)
    if math.isinf(epsilon):
        return correct / N
    noisy = int(add_geometric(correct, sensitivity=1, epsilon=epsilon, rng=rng))
    return float(np.clip(noisy / N, 0.0, 1.0))


def _checked_pair(y_true, y_pred, patients, release, *, tag, block, params=None, dtype=None):
    """The checks and the stream a metric of two aligned 1-D inputs starts with:
    ``(yt, yp, N, codes, k, rng, epsilon)``.

    ``patients`` is ``(groups, max_rows_per_group)``, ``release`` is ``(epsilon, delta,
    random_state, ledger)``. In order: the bound ``k``; the inputs (``dtype`` in memory,
    checked there; on Dask metadata only, so the labels stay on the workers and ``block``
    checks them per partition); the patient labels; the privacy parameters; the stream
    ``tag``, seeded by ``epsilon``, ``delta`` and ``params``; the ledger; with ``groups``
    the rows kept, at most ``k`` a patient chosen at random with that stream.
    """
    groups, max_rows_per_group = patients
    epsilon, delta, random_state, ledger = release
    k = _check_bound(groups, max_rows_per_group, y_true, y_pred)
    if any_dask(y_true, y_pred):
        yt, yp, N = as_1d_pair(y_true, y_pred, ("y_true", "y_pred"))
    else:
        yt = column_or_1d(y_true, input_name="y_true", dtype=dtype)
        yp = column_or_1d(y_pred, input_name="y_pred", dtype=dtype)
        check_consistent_length(yt, yp)
        N = yt.shape[0]
        _check_labels(yt, yp)
    if N == 0 and groups is None:  # with groups a patient-free input is a release too
        raise ValueError("y_true is empty")
    codes = _patient_labels(groups, N, any_dask(yt, yp))
    epsilon, delta = check_privacy_params(epsilon, delta)
    seeded = {"epsilon": epsilon, "delta": delta, **(params or {})}
    rng = release_rng(random_state, tag=tag, **_seed_material(seeded, (yt, yp), codes, k))
    _check_ledger(ledger)
    if codes is not None:  # at most k rows per patient, chosen at random
        yt, yp = _bounded(codes, k, rng, yt, yp, check=block)
        N = int(yt.shape[0])
    return yt, yp, N, codes, k, rng, epsilon


def _patient_accuracy(correct, wrong, k, epsilon, rng):
    """The accuracy per patient: the number of kept rows is private, so both counts are
    released, ``(correct, wrong)`` each with two-sided geometric noise ``G(epsilon / k)``
    (a patient's rows add at most ``k`` to the two counts together: L1 sensitivity
    ``k`` of the pair), and the ratio is post-processing. No rows (an empty fold):
    noise only, never an error, so that whether a call succeeds depends on no patient.
    """
    if math.isinf(epsilon):
        return correct / max(correct + wrong, 1)
    sens = group_sensitivity(count_sensitivity(), k)
    c = int(add_geometric(correct, sensitivity=sens, epsilon=epsilon, rng=rng))
    w = int(add_geometric(wrong, sensitivity=sens, epsilon=epsilon, rng=rng))
    return float(np.clip(c / max(c + w, 1), 0.0, 1.0))


def _check_bound(groups, max_rows_per_group, *arrays):
    """The contribution bound ``k`` of a patient-level metric (``None`` without
    ``groups``); errors name the parameter, never a value. Dask ``groups`` beside
    in-memory labels is refused (computing them would bring them to the client)."""
    k = None if max_rows_per_group is None else check_max_rows_per_group(max_rows_per_group)
    if groups is None:
        return None
    if any_dask(groups) and not any_dask(*arrays):
        raise ValueError(DASK_GROUPS_IN_MEMORY)
    if k is None:
        raise ValueError(f"groups= needs max_rows_per_group: {GROUPS_HELP}")
    return k


def _patient_labels(groups, n, dask_input):
    """The checked labels: integer codes in memory, a 1-D Dask array (or the checked
    in-memory labels) beside Dask input, bounded on the workers (:func:`_bounded`)."""
    if groups is None:
        return None
    return check_dask_groups(groups, n) if dask_input else check_groups(groups, n)


def _seed_material(params, data, codes, k):
    """``release_rng``'s ``params``, ``data`` and ``order_invariant``: the grouping and
    ``k`` only when ``groups`` is given (row-level seeds stay as they were), and then
    order-dependent in memory (the bounded subset depends on the row order; on Dask it
    does not, and Dask input is digested as a multiset)."""
    if codes is None:
        return {"params": params, "data": data, "order_invariant": True}
    return {
        "params": {**params, "max_rows_per_group": k},
        "data": (*data, codes),
        "order_invariant": any_dask(*data),
    }


def _spend(ledger, epsilon, label, codes):
    """Charge ``(epsilon, 0)`` to ``ledger``, per patient (``unit="group"``) with
    ``groups``; a row-level spend is charged as before (no ``unit`` keyword)."""
    if codes is None:
        ledger.spend(epsilon, 0.0, label=label)
    else:
        ledger.spend(epsilon, 0.0, label=label, unit="group")


def _bounded(codes, k, rng, *arrays, check=None):
    """``arrays`` restricted to at most ``k`` rows per patient, chosen uniformly at
    random with ``rng`` (:func:`skdp.utils._groups.bound_contributions`); on Dask
    input on the workers, after Dask's shuffle by patient
    (:func:`skdp.utils._groups_dask.bound_dask_rows`), once every row passed the block
    check ``check`` (whether the input is refused must not depend on the rows kept)."""
    if any_dask(*arrays):
        if check is not None:  # its result (of every row) is dropped on the workers
            row_sum(functools.partial(_only_check, check), *arrays)
        return tuple(bound_dask_rows(list(arrays), codes, k, rng)[0])
    keep = bound_contributions(codes, k, rng)
    return tuple(a[keep] for a in arrays)


def _only_check(check, *blocks):
    """Run the block check ``check`` and return 0 (nothing of the rows)."""
    check(*blocks)
    return 0


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
