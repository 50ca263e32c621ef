"""Differentially private regression metrics: MSE, MAE and R² over a declared target range.

Neighbouring relation: **replace one row** (its label and its prediction); the number of
rows is public, as for the other DP scorers. With ``groups``: add or remove one patient
with all their rows (:doc:`/patients`); the number of rows is then private and not used.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from skdp.base import _shared_constraints
from skdp.mechanisms import add_geometric, add_laplace
from skdp.mechanisms.sensitivity import group_sensitivity, regression_sum_sensitivities
from skdp.metrics._accuracy import _checked_pair, _spend
from skdp.utils._docstrings import insert_docs
from skdp.utils._rowsum import (
    FRACTION_BITS,
    fixed_point_gram,
    row_sum,
)
from skdp.utils._sklearn_compat import validate_params
from skdp.utils.validation import check_finite

__all__ = ["dp_mean_absolute_error", "dp_mean_squared_error", "dp_r2_score"]

_COMMON_DOC = """
    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True targets (in memory, or a ``dask.array.Array``/``dask.dataframe.Series``
        summed partition by partition, :doc:`/dask`).
    y_pred : array-like of shape (n_samples,)
        Predictions of a model fitted on *other* rows.
    bounds_y : (lo, hi)
        The public range of the target, declared before seeing the data (e.g. a
        clinical plausibility range). Labels and predictions are clipped to it; its
        width sets the noise.
    epsilon : float
        Privacy loss of this call (> 0; ``math.inf`` returns the exact value of the
        clipped metric).
    delta : float, default=0.0
        Accepted for a uniform signature; the Laplace mechanism is pure DP, so the call
        spends ``(epsilon, 0)``.
    random_state : None, int, Generator or SeedSequence, default=None
        Source of the noise; ``None`` draws fresh OS entropy on every call.
    ledger : PrivacyLedger, optional
        Charged ``(epsilon, 0)`` after the inputs are validated and before any noise
        is drawn (a refused spend releases nothing); with ``groups`` per patient
        (``unit="group"``).
    groups : array-like of shape (n_samples,), default=None
        The patient (or other privacy unit) of each row, as in scikit-learn's
        ``GroupKFold``. With ``groups`` the guarantee is per patient: each patient keeps
        at most ``max_rows_per_group`` rows (chosen at random) and every sensitivity is
        that many times the row's (Notes). In memory only.
    max_rows_per_group : int, default=None
        The public number of rows one patient may contribute (from the visit schedule
        or the study protocol, never from the data). Required with ``groups``.
"""

#: the Notes' paragraph on ``groups``, shared by the three metrics
_GROUPS_NOTE = """
    With ``groups``: neighbouring relation add or remove one patient with all their
    rows (:doc:`/patients`). Each patient keeps at most ``k = max_rows_per_group``
    rows, chosen uniformly at random inside the mechanism (never the first ``k``: the
    order of the rows is data). The number ``N`` of kept rows is then private (a
    patient moves it by up to ``k``): the mean errors divide their noisy sum by a noisy
    count (each on half of ``epsilon``, the count with noise ``G(epsilon / (2 k))``),
    and R² does not use ``N``; an input without rows (an empty cross-validation fold)
    releases noise only. The row-level bounds above hold for adding or
    removing a row as well as for replacing one (an added row adds a term in ``[0,
    R**2]`` to ``SSE``, ``[0, R]`` to ``SAE``, and ``N/(N+1) (y - mean(y))**2 <= R**2``
    to ``SST``), so a patient, at most ``k`` such steps, moves each sum by at most ``k``
    times the row's sensitivity (:func:`skdp.mechanisms.sensitivity.group_sensitivity`);
    the noise (and any clamp at one noise scale) is calibrated to that, and ``epsilon``
    holds per patient.
"""


#: the References of the three metrics (Laplace mechanism)
_REFERENCES = """
    References
    ----------
    .. [1] {ref_dwork2006}

    Examples
    --------"""


def _documented(summary, rest, examples):
    """Give a metric its docstring: ``summary``, the shared parameters, ``rest`` (Returns
    and Notes), the Notes' paragraph on ``groups``, the References and ``examples``."""

    def decorate(fn):
        fn.__doc__ = summary + _COMMON_DOC + rest + _GROUPS_NOTE + _REFERENCES + examples
        return insert_docs(fn)

    return decorate


def _check_bounds_y(bounds_y):
    try:
        lo, hi = (float(v) for v in bounds_y)
    except (TypeError, ValueError):
        raise TypeError("bounds_y must be a (lo, hi) pair of numbers") from None
    regression_sum_sensitivities(lo, hi)  # finite, lo < hi, R**2 finite
    return lo, hi


def _block_sums(yt, yp, lo, hi):
    """Exact fixed-point Gram of ``[z_y, z_p, |z_y - z_p|, 1]``, ``z = (clip(v) - lo) / R``."""
    yt = np.asarray(yt, dtype=np.float64).reshape(-1)
    yp = np.asarray(yp, dtype=np.float64).reshape(-1)
    check_finite(yt, name="y_true")
    check_finite(yp, name="y_pred")
    width = hi - lo
    zt = (np.clip(yt, lo, hi) - lo) / width
    zp = (np.clip(yp, lo, hi) - lo) / width
    Z = np.column_stack([zt, zp, np.abs(zt - zp), np.ones_like(zt)])
    return fixed_point_gram(np.clip(Z, 0.0, 1.0))


def _sums(y_true, y_pred, bounds_y, epsilon, delta, tag, random_state, ledger, groups, bound):
    """``(N, {"sse", "sae", "sst"} exact sums in target units, rng, epsilon, k)``, over
    the rows kept (at most ``k = bound`` a patient) when ``groups`` is given."""
    lo, hi = _check_bounds_y(bounds_y)
    block = functools.partial(_block_sums, lo=lo, hi=hi)
    yt, yp, N, codes, k, rng, epsilon = _checked_pair(
        y_true,
        y_pred,
        (groups, bound),
        (epsilon, delta, random_state, ledger),
        tag=tag,
        block=block,
        params={"bounds_y": (lo, hi)},
        dtype=np.float64,
    )
    # exact integer sums in units of 2**-(2 FRACTION_BITS), combined exactly, rounded once
    G = row_sum(block, yt, yp)
    if G is None:  # no rows (a patient-level call on an empty fold): all sums are 0
        G = np.zeros((4, 4), dtype=object)
    if ledger is not None:
        _spend(ledger, epsilon, tag, codes)
    unit = 2 * FRACTION_BITS
    width = hi - lo
    sse = int(G[0, 0]) - 2 * int(G[0, 1]) + int(G[1, 1])
    sst = Fraction(N * int(G[0, 0]) * (1 << unit) - int(G[0, 3]) ** 2, max(N, 1) << unit)
    sums = {
        "sse": math.ldexp(float(sse), -unit) * width**2,
        "sae": math.ldexp(float(int(G[2, 3])), -unit) * width,
        "sst": float(sst / (1 << unit)) * width**2,
    }
    return N, sums, rng, epsilon, k


def _sensitivities(lo, hi, k):
    """The sums' sensitivities for the privacy unit: the row's, or ``k`` times them."""
    sens = regression_sum_sensitivities(lo, hi)
    return sens if k is None else {key: group_sensitivity(v, k) for key, v in sens.items()}


def _regression_metric(name, release, summary, rest, examples):
    """The public function ``name``: the signature and the exact sums the three metrics
    share, then ``release(N, sums, rng, epsilon, k, lo, hi)``, the metric's own noise."""

    def metric(
        y_true,
        y_pred,
        *,
        bounds_y,
        epsilon,
        delta=0.0,
        random_state=None,
        ledger=None,
        groups=None,
        max_rows_per_group=None,
    ):
        N, sums, rng, epsilon, k = _sums(
            y_true,
            y_pred,
            bounds_y,
            epsilon,
            delta,
            name,
            random_state,
            ledger,
            groups,
            max_rows_per_group,
        )
        return release(N, sums, rng, epsilon, k, *_check_bounds_y(bounds_y))

    metric.__name__ = metric.__qualname__ = name
    metric = _documented(summary, rest, examples)(metric)
    constraints = _shared_constraints("random_state")
    return validate_params(constraints, prefer_skip_nested_validation=True)(metric)


def _mean_error(kind, N, sums, rng, epsilon, k, lo, hi):
    """The noisy mean of the per-row errors whose sum is ``sums[kind]``."""
    term = regression_sum_sensitivities(lo, hi)[kind]  # the largest per-row term
    sens = _sensitivities(lo, hi, k)[kind]
    total = sums[kind]
    if k is not None:  # N is private per patient: a noisy count divides the noisy sum
        return _patient_mean(total, N, term, sens, k, epsilon, rng)
    if not math.isinf(epsilon):
        total = float(add_laplace(total, sensitivity=sens, epsilon=epsilon, rng=rng))
    # post-processing: the sum lies in [0, N * (largest term)]
    return float(np.clip(total, 0.0, N * term) / N)


def _r2(N, sums, rng, epsilon, k, lo, hi):
    """``1 - SSE~ / SST~``, each sum on half of ``epsilon``."""
    sens = _sensitivities(lo, hi, k)
    sse, sst = sums["sse"], sums["sst"]
    if not math.isinf(epsilon):
        half = epsilon / 2.0
        sse = float(add_laplace(sse, sensitivity=sens["sse"], epsilon=half, rng=rng))
        sst = float(add_laplace(sst, sensitivity=sens["sst"], epsilon=half, rng=rng))
        # post-processing: SSE >= 0, and SST no smaller than one noise scale, so that a
        # noisy near-zero denominator cannot blow the ratio up
        sse = max(sse, 0.0)
        sst = max(sst, sens["sst"] / half)
    elif sst == 0.0:
        return 1.0 if sse == 0.0 else -math.inf
    return 1.0 - sse / sst


def _patient_mean(total, N, term, sens, k, epsilon, rng):
    """``total / N`` per patient: the sum (Laplace, sensitivity ``sens``) and the number
    of kept rows (two-sided geometric, sensitivity ``k``) each on ``epsilon / 2``; the
    ratio, clamped to ``[0, term]``, is post-processing (no rows: noise only)."""
    if math.isinf(epsilon):
        return float(total / max(N, 1))
    half = epsilon / 2.0
    total = float(add_laplace(total, sensitivity=sens, epsilon=half, rng=rng))
    count = int(add_geometric(N, sensitivity=k, epsilon=half, rng=rng))
    return float(np.clip(total / max(count, 1), 0.0, term))


dp_mean_squared_error = _regression_metric(
    "dp_mean_squared_error",
    functools.partial(_mean_error, "sse"),
    """Differentially private mean squared error over a declared target range.
""",
    """
    Returns
    -------
    mse : float
        The noisy mean of ``(clip(y) - clip(p))**2``, clamped to ``[0, R**2]`` where
        ``R = hi - lo``. Lower is better (the scorer ``"neg_mean_squared_error"``
        returns its negative, scikit-learn's convention).

    Notes
    -----
    Neighbouring relation: replace one row (label and prediction), ``N`` public (as
    for the other DP scorers, :ref:`neighbouring-relation`). Mechanism: Laplace on the
    sum of squared errors, whose sensitivity is ``R**2``
    (:func:`skdp.mechanisms.sensitivity.regression_sum_sensitivities`); dividing by the
    public ``N`` and clamping are post-processing. Pure ``epsilon``-DP, exact
    guarantee (no accountant: one mechanism). The sums are computed exactly in fixed
    point (independent of chunking and of numpy vs Dask input), then rounded once.
    Floating point: the Laplace noise is drawn in floating point, so the guarantee is
    for the mathematical mechanism (Mironov 2012).
""",
    """
    >>> import numpy as np
    >>> from skdp.metrics import dp_mean_squared_error
    >>> rng = np.random.default_rng(0)
    >>> y = rng.uniform(0, 10, 2000)
    >>> mse = dp_mean_squared_error(y, y + 1.0, bounds_y=(0, 10), epsilon=1.0,
    ...                             random_state=0)
    >>> abs(mse - 0.95) < 0.2
    True
    """,
)


dp_mean_absolute_error = _regression_metric(
    "dp_mean_absolute_error",
    functools.partial(_mean_error, "sae"),
    """Differentially private mean absolute error over a declared target range.
""",
    """
    Returns
    -------
    mae : float
        The noisy mean of ``|clip(y) - clip(p)|``, clamped to ``[0, R]``.

    Notes
    -----
    Neighbouring relation: replace one row, ``N`` public (:ref:`neighbouring-relation`).
    Mechanism: Laplace on the sum of absolute errors, sensitivity ``R = hi - lo``
    (:func:`skdp.mechanisms.sensitivity.regression_sum_sensitivities`); division by
    ``N`` and clamping are post-processing. Pure ``epsilon``-DP, exact guarantee.
    Floating point: Laplace noise drawn in floating point (Mironov 2012).
""",
    """
    >>> import numpy as np
    >>> from skdp.metrics import dp_mean_absolute_error
    >>> y = np.linspace(0, 10, 2000)
    >>> mae = dp_mean_absolute_error(y, y + 0.5, bounds_y=(0, 10), epsilon=1.0,
    ...                              random_state=0)
    >>> abs(mae - 0.5) < 0.05
    True
    """,
)


dp_r2_score = _regression_metric(
    "dp_r2_score",
    _r2,
    """Differentially private coefficient of determination R² over a declared range.
""",
    """
    Returns
    -------
    r2 : float
        ``1 - SSE~ / SST~`` from a noisy sum of squared errors and a noisy total sum of
        squares; at most 1.

    Notes
    -----
    Neighbouring relation: replace one row, ``N`` public (:ref:`neighbouring-relation`).
    Mechanism: Laplace noise on ``SSE = sum (y - p)**2`` and on ``SST = sum (y -
    mean(y))**2``, each with ``epsilon / 2`` and sensitivity ``R**2`` (``R = hi - lo``;
    :func:`skdp.mechanisms.sensitivity.regression_sum_sensitivities` proves both
    bounds), composed sequentially: pure ``epsilon``-DP, exact guarantee. Clamping
    ``SSE~`` at 0 and ``SST~`` at one noise scale ``2 R**2 / epsilon`` (so a noisy
    denominator near 0 cannot make the ratio explode) is post-processing; it biases R²
    towards 0 when the true ``SST`` is of the order of the noise, i.e. for small ``N``
    or a target range much wider than the spread of ``y``. Declare a tight range.
    Floating point: Laplace noise drawn in floating point (Mironov 2012).
""",
    """
    >>> import numpy as np
    >>> from skdp.metrics import dp_r2_score
    >>> rng = np.random.default_rng(0)
    >>> y = rng.uniform(0, 10, 2000)
    >>> r2 = dp_r2_score(y, y + rng.normal(0, 1, 2000), bounds_y=(0, 10), epsilon=1.0,
    ...                  random_state=0)
    >>> abs(r2 - 0.88) < 0.05
    True
    """,
)
