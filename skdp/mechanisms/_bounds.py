"""Private quantiles and private bounds (used when the user gives no bounds)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from skdp.exceptions import BoundsEstimateWarning
from skdp.mechanisms._quantiles import (
    above_threshold_bound,
    integer_grid_candidates,
    log_grid_candidates,
    private_quantile,
)
from skdp.mechanisms._validation import check_epsilon, check_rng
from skdp.mechanisms.sensitivity import group_sensitivity, quantile_utility_sensitivity
from skdp.utils.validation import as_float_array, check_bounds, check_finite, data_bounds

__all__ = [
    "BOUNDS_FRACTION",
    "PRIVATE_OPT_IN",
    "bounds_estimate_unreliable",
    "private_bounds",
    "resolve_bounds",
]

#: Share of an estimator's epsilon that a private estimate of its missing bounds spends
#: by default: :func:`resolve_bounds`, :func:`resolve_schema_bounds` and the estimators
#: that take a table (the tabular front end, DPFlowDensity, DPGANSynthesizer's budget).
BOUNDS_FRACTION = 0.1

#: Relative width (of the public search range) of the interval put around a column
#: whose private low estimate is not below its private high estimate.
DEGENERATE_WIDTH = 1e-6


_NO_ROWS = (
    "X has no rows: bounds cannot be estimated from zero rows (a private estimate would "
    "be noise alone); declare public bounds"
)


def private_bounds(
    X,
    *,
    epsilon,
    rng,
    search_range=(-1e6, 1e6),
    quantiles=(0.01, 0.99),
    method="sparse_vector",
    kinds=None,
):
    """ε-DP per-column bounds: two private quantile queries per column.

    For every column ``j`` the low bound is a private ``quantiles[0]`` quantile and the
    high bound a private ``quantiles[1]`` quantile, both searched in the public
    ``search_range``; each of the ``2 d`` queries spends ``epsilon / (2 d)``
    (sequential composition; total ``epsilon``).

    * ``method="sparse_vector"`` (default): :func:`above_threshold_bound` over
      :func:`log_grid_candidates` of the search range: ``lo`` is the first candidate,
      scanning down, with at most ``quantiles[0]·n`` rows below it, ``hi`` the first,
      scanning up, with at most ``(1 − quantiles[1])·n`` rows above it. It returns the
      tightest covering grid point (up to a 19 % relative step) and copes with wide
      ranges, ties and constant columns. If the two estimates are not ordered they are
      swapped; if they are equal they are replaced by the neighbouring candidates
      below and above (public values). It needs roughly ``n · ε / (2 d) · q >= 2``
      (``q`` the tail mass, 0.01 by default): with less, a noisy early stop can give
      a range that misses much of the data (still private, but poor).
    * ``method="continuous"``: :func:`private_quantile` (Smith 2011) on the whole
      range. Its error grows with ``log((upper − lower) / spacing) / ε``: with a wide
      range and a small ``ε`` the outer intervals dominate and the estimate can land
      far outside the data. If ``lo >= hi`` the pair is replaced by the interval of
      width ``DEGENERATE_WIDTH · (upper − lower)`` centred on their midpoint.

    Either way the repair uses public amounts only (post-processing) and
    ``lo < hi`` always holds.

    Declared column kinds (``kinds``, public metadata such as a
    :class:`~skdp.utils.schema.TabularSchema`'s) shape the search: a ``"binary"``
    column gets its declared support ``(0, 1)`` without any query (it spends nothing;
    the budget is split over the other columns' ``2 d'`` queries), and an
    ``"integer"`` column is searched on :func:`integer_grid_candidates`, so its range
    is never narrower than 1 and a mostly-0 count or 0/1 column keeps its 1s. A
    column of undeclared kind is ``"continuous"``: the array's dtype is *not* read,
    because a dtype inferred from the values (``pandas.read_csv`` gives ``int64`` only
    when every value is a whole number) can change when one row changes.

    Privacy: ε-DP under add/remove one row (and replace-one), exact guarantee.

    Parameters
    ----------
    X : array-like of shape (n, d) or (n,)
        At least one row (zero rows raise ``ValueError``: there is nothing to estimate).
    epsilon : float
    rng : numpy.random.Generator
    search_range : (lower, upper), scalars or per-column arrays, default=(-1e6, 1e6)
        Public, data-independent range.
    quantiles : (float, float), default=(0.01, 0.99)
    method : {"sparse_vector", "continuous"}, default="sparse_vector"
    kinds : None, str or sequence of {"continuous", "integer", "binary"}, default=None
        Declared kind of every column (``None``: all continuous).

    Returns
    -------
    lo, hi : ndarray of shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import private_bounds
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(2000, 2))
    >>> lo, hi = private_bounds(X, epsilon=1.0, rng=np.random.default_rng(1))
    >>> bool(np.all(lo < hi))
    True
    """
    lo, hi, _ = _private_bounds(X, epsilon, rng, search_range, quantiles, method, kinds)
    return lo, hi


_KINDS = ("continuous", "integer", "binary")


def _check_kinds(kinds, d):
    if kinds is None:
        return ["continuous"] * d
    if isinstance(kinds, str):
        kinds = [kinds] * d
    kinds = list(kinds)
    if len(kinds) != d or any(k not in _KINDS for k in kinds):
        raise ValueError(f"kinds must be None or {d} values among {_KINDS}, got {kinds!r}")
    return kinds


def _private_bounds(X, epsilon, rng, search_range, quantiles, method, kinds):
    """:func:`private_bounds`, plus a mask of the columns whose two estimates coincided.

    The mask (``lo == hi`` before the repair: most rows share one value) is a function
    of the released estimates, so reporting it is post-processing.
    """
    check_rng(rng)
    epsilon = check_epsilon(epsilon)
    if method not in ("sparse_vector", "continuous"):
        raise ValueError(f"method must be 'sparse_vector' or 'continuous', got {method!r}")
    X = as_float_array(X, name="X")
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError("X must be 1-d or 2-d")
    if X.shape[0] == 0:
        raise ValueError(_NO_ROWS)
    check_finite(X, name="X")
    d = X.shape[1]
    kinds = _check_kinds(kinds, d)
    q_lo, q_hi = (float(q) for q in quantiles)
    if not 0.0 <= q_lo < q_hi <= 1.0:
        raise ValueError("quantiles must satisfy 0 <= low < high <= 1")
    s_lo, s_hi = check_bounds(search_range, d, name="search_range")
    n_queried = sum(k != "binary" for k in kinds)
    eps_each = epsilon / (2 * max(n_queried, 1))
    lo = np.empty(d)
    hi = np.empty(d)
    point_mass = np.zeros(d, dtype=bool)
    for j in range(d):
        a, b = s_lo[j], s_hi[j]
        if kinds[j] == "binary":
            # declared support {0, 1}: public, nothing is read
            lo[j], hi[j] = 0.0, 1.0
        elif method != "continuous" or kinds[j] == "integer":
            if kinds[j] == "integer":
                c = integer_grid_candidates(a, b)
            else:
                c = log_grid_candidates(a, b)
            kw = dict(candidates=c, epsilon=eps_each, rng=rng)
            lo[j] = above_threshold_bound(X[:, j], q_lo, side="lower", **kw)
            hi[j] = above_threshold_bound(X[:, j], q_hi, side="upper", **kw)
            if lo[j] > hi[j]:
                lo[j], hi[j] = hi[j], lo[j]
            elif lo[j] == hi[j]:
                point_mass[j] = True
                i = int(np.searchsorted(c, lo[j]))
                lo[j], hi[j] = c[max(i - 1, 0)], c[min(i + 1, c.size - 1)]
        else:
            lo[j] = private_quantile(X[:, j], q_lo, lower=a, upper=b, epsilon=eps_each, rng=rng)
            hi[j] = private_quantile(X[:, j], q_hi, lower=a, upper=b, epsilon=eps_each, rng=rng)
            if not lo[j] < hi[j]:
                point_mass[j] = True
                mid = lo[j] / 2 + hi[j] / 2
                half = DEGENERATE_WIDTH * (b / 2 - a / 2)
                lo[j], hi[j] = mid - half, mid + half
    return lo, hi, point_mass


#: Warn when n * tail quantile * per-query epsilon falls below this. Measured on U(0, 10)
#: data, 30 seeds, default search range: at 0.5 and above no estimate missed the data or
#: returned a bound beyond +-100; at 0.25 a third did; at 0.15, 80 %.
_RELIABLE_ROWS_PER_NOISE = 0.5

#: Warn when the probability that the sparse-vector scan stops before the data (a
#: candidate below all the data accepted) exceeds this, per column.
_FALSE_STOP_PROBABILITY = 0.05


def _false_stop_probability(x, k):
    """P(AboveThreshold accepts one of ``k`` queries of value ``-x/ε``) at budget ``ε``.

    In units of ``1/ε``: query noise ``Lap(4)``, threshold noise ``t ~ Lap(2)``;
    ``P = E_t[1 - (1 - P(Lap(4) >= x + t))^k]``, by a fixed quadrature in ``t``
    (deterministic; public inputs only).
    """
    t = np.linspace(-80.0, 80.0, 16001)
    w = np.exp(-np.abs(t) / 2.0) / 4.0 * (t[1] - t[0])
    a = x + t
    p1 = np.where(a > 0, 0.5 * np.exp(-np.abs(a) / 4.0), 1.0 - 0.5 * np.exp(-np.abs(a) / 4.0))
    return float(np.sum(w * -np.expm1(k * np.log1p(-np.minimum(p1, 1 - 1e-16)))))


#: Default public minimum width of a continuous column's range, relative to the largest
#: magnitude of its search range (0.01 for the default (-1e6, 1e6)); ten times the
#: finest step of :func:`log_grid_candidates` there.
MIN_WIDTH_REL = 1e-8


def _grid_size(a, b, kind):
    if kind == "binary":
        return 0
    if kind == "integer":
        return integer_grid_candidates(a, b).size
    return log_grid_candidates(a, b).size


def bounds_estimate_unreliable(n, epsilon_bounds, quantiles, grid_sizes):
    """Why a private bounds estimate cannot be relied on, from public quantities only.

    Returns a reason (str) or ``None``. The arguments are all public: the number of
    rows ``n``, the estimate's budget, the quantiles and, per column, the number of
    public candidates the sparse-vector scan may visit (0 for a declared binary
    column, which is not queried). Two rules:

    * rows per unit of noise: ``n · q_tail · ε_query < 0.5`` (``ε_query`` is the
      budget over ``2 d'`` queries, ``d'`` the queried columns), measured on uniform
      data (below it, a third or more of the estimates missed the data);
    * the grid: the scan visits up to ``K`` candidates before the data, each with query
      value ``−(1 − q_tail) n``; it stops early if one of their ``Lap(4/ε_query)``
      noises exceeds that plus the ``Lap(2/ε_query)`` threshold noise. The rule fires
      when that probability (computed exactly, :func:`_false_stop_probability`) is
      above 0.05: a wider search range, a finer grid or wider tail quantiles (where
      the first rule is lenient) need more rows.

    Examples
    --------
    >>> from skdp.mechanisms import bounds_estimate_unreliable
    >>> bounds_estimate_unreliable(5000, 1.0, (0.01, 0.99), [241, 241]) is None
    True
    >>> bounds_estimate_unreliable(50, 1.0, (0.01, 0.99), [241]) is not None
    True
    """
    try:
        sizes = [int(k) for k in np.asarray(grid_sizes, dtype=float).reshape(-1)]
    except (TypeError, ValueError, OverflowError):
        raise ValueError("grid_sizes must be finite non-negative counts") from None
    sizes = [k for k in sizes if k > 0]
    if not sizes:
        return None
    d_q = len(sizes)
    q_tail = min(min(quantiles), 1.0 - max(quantiles))
    eps_query = epsilon_bounds / (2 * d_q)
    if n * q_tail * eps_query < _RELIABLE_ROWS_PER_NOISE:
        return (
            f"n * tail quantile * per-query epsilon = {n * q_tail * eps_query:.3g} < "
            f"{_RELIABLE_ROWS_PER_NOISE}"
        )
    x = (1.0 - q_tail) * n * eps_query
    p_false = _false_stop_probability(x, max(sizes))
    if p_false > _FALSE_STOP_PROBABILITY:
        return (
            f"the scan over up to {max(sizes)} public candidates stops before the data "
            f"with probability {p_false:.2g} > {_FALSE_STOP_PROBABILITY}"
        )
    return None


#: The explicit opt-in to a private bounds estimate that cannot be reliable.
PRIVATE_OPT_IN = "private"


def _names(name):
    """Parameter name(s) for messages: a str, or a sequence of names (joined)."""
    return [name] if isinstance(name, str) else [str(n) for n in name]


def _check_estimate_reliable(n, epsilon_bounds, quantiles, grid_sizes, name, labels, opt_in):
    """Refuse (or, with the opt-in, warn about) a private bounds estimate that cannot be
    reliable.

    Decided before the estimate from public quantities only
    (:func:`bounds_estimate_unreliable`: ``n``, the estimate's budget, the quantiles and
    the public grid sizes), never from the values of the rows or of the release, so the
    refusal and the warning reveal nothing about the data: two neighbouring data sets of
    the same size get the same decision.
    """
    reason = bounds_estimate_unreliable(n, epsilon_bounds, quantiles, grid_sizes)
    if reason is None:
        return
    names = _names(name)
    queried = [lab for lab, k in zip(labels, grid_sizes, strict=True) if int(k) > 0]
    cols = ", ".join(repr(c) for c in queried[:10])
    if len(queried) > 10:
        cols += f" and {len(queried) - 10} more"
    what = (
        f"estimating bounds privately for {len(queried)} column(s) ({cols}) from {n} rows "
        f"with epsilon={epsilon_bounds:.3g} cannot be reliable ({reason})"
    )
    if opt_in:
        warnings.warn(
            " and ".join(f'{nm}="private"' for nm in names)
            + f": {what}: the bounds may be far too wide or too narrow, and utility poor. "
            "Declare public bounds instead (doc/choosing_bounds.rst).",
            BoundsEstimateWarning,
            stacklevel=4,
        )
        return
    declare = " and ".join(
        f"{nm}=(low, high)" + ("" if nm.endswith("_y") else f" or {nm}={{column: (low, high)}}")
        for nm in names
    )
    raise ValueError(
        " and ".join(f"{nm}=None" for nm in names)
        + f": {what}, so skdp refuses it. Declare public bounds: {declare}, ranges "
        "fixed without looking at the rows (clinical plausibility ranges, the data "
        "dictionary; see doc/choosing_bounds.rst). Declare 0/1 columns binary: bounds (0, "
        '1), or column_types={column: "binary"} for the synthesizers. Or opt in to the '
        "unreliable estimate with "
        + " and ".join(f'{nm}="private"' for nm in names)
        + " (it warns with BoundsEstimateWarning)."
    )


def _warn_if_bounds_too_narrow(lo, hi, min_width, point_mass, labels, name):
    """Warn about released ranges narrower than a public minimum width, or collapsed.

    A function of the released estimate and public amounts only (post-processing).
    """
    narrow = (hi - lo < min_width) | point_mass
    if not narrow.any():
        return
    cols = ", ".join(
        f"{labels[j]!r} [{lo[j]:.3g}, {hi[j]:.3g}]" for j in np.nonzero(narrow)[0][:10]
    )
    more = "" if narrow.sum() <= 10 else f" and {int(narrow.sum()) - 10} more"
    label = "/".join(_names(name))
    warnings.warn(
        f"{label}: the private range of column(s) {cols}{more} is narrower than the "
        "public minimum width or collapsed onto one value (most rows share it). Values "
        "away from it are clipped into the range: the 1s of a rare 0/1 indicator, for "
        "instance, become nearly 0 and utility can be very poor. Declare public bounds, "
        "or the column's kind (kinds='binary' or 'integer').",
        BoundsEstimateWarning,
        stacklevel=4,
    )


def resolve_bounds(
    bounds,
    X,
    *,
    epsilon,
    rng,
    name="bounds",
    columns=None,
    fraction=BOUNDS_FRACTION,
    search_range=(-1e6, 1e6),
    quantiles=(0.01, 0.99),
    method="sparse_vector",
    kinds=None,
    min_width=None,
    max_rows_per_group=None,
):
    """Turn an estimator's ``bounds`` parameter into arrays, privately if needed.

    * bounds given (pair of scalars/arrays, or dict ``{column: (lo, hi)}``):
      :func:`skdp.utils.validation.check_bounds`; nothing is spent.
    * ``"data"``: :func:`skdp.utils.validation.data_bounds` (min/max of the data, emits
      :class:`~skdp.exceptions.PrivacyLeakWarning`); nothing is charged because the
      guarantee no longer covers the bounds.
    * ``None``: :func:`private_bounds` with ``fraction * epsilon`` (skdp's default
      0.1); returns that spend, which the caller charges to ``epsilon_spent_`` and
      subtracts from what remains for the estimator. When the estimate cannot be
      reliable by public quantities (:func:`bounds_estimate_unreliable`: ``n``, the
      budget, the quantiles, the public grid) it is **refused** with a ``ValueError``
      that says what to declare, before any row is read.
    * ``"private"``: the explicit opt-in to the same estimate whatever its reliability:
      where ``None`` would refuse, it estimates and warns with
      :class:`~skdp.exceptions.BoundsEstimateWarning`.

    With ``epsilon=inf`` (privacy off) ``None`` and ``"private"`` use the data min/max
    without a warning and spend nothing (a constant column gets ``hi = lo + 1``).

    The refusal (and the opt-in's warning) is decided before the estimate from ``n``,
    ``fraction * epsilon``, ``quantiles`` and the sizes of the public search grids only,
    never from the values of the rows nor of the release (``n`` is public under skdp's
    relation, :ref:`neighbouring-relation`): two data sets with the same number of rows
    get the same decision, whatever their values. After the estimate, with either value,
    :class:`~skdp.exceptions.BoundsEstimateWarning` fires when a released range is
    narrower than the public ``min_width`` or both estimates fell on one value (a point
    mass: a mostly-0 one-hot column would have its 1s clipped to about 0.001). That test
    reads only the released estimate, so it is post-processing; it warns and never
    refuses. Declared ``kinds`` avoid that failure: ``"binary"``
    columns get ``(0, 1)`` unqueried, ``"integer"`` columns an integer grid
    (:func:`private_bounds`). The dtype of ``X`` is not taken as a declaration: a
    dtype inferred from the values can change when one row changes.

    Parameters
    ----------
    bounds : None, "private", "data", tuple or dict
    X : array-like of shape (n, d) or (n,)
        Not read when ``bounds`` are declared. Otherwise it needs at least one row: an
        estimate from zero rows raises ``ValueError``.
    epsilon : float
        The estimator's total ε (the share used here is ``fraction * epsilon``).
    rng : numpy.random.Generator
    name : str or sequence of str, default="bounds"
        Parameter name(s) for messages (several when one estimate covers several
        parameters, e.g. ``("bounds_X", "bounds_y")``).
    columns : sequence, optional
        Column names (dict bounds, messages).
    fraction : float in (0, 1), default=BOUNDS_FRACTION (0.1)
    search_range, quantiles, method, kinds
        Passed to :func:`private_bounds`.
    min_width : None, float or array-like of shape (d,), default=None
        Public minimum width of an estimated range; narrower ranges are released with a
        warning. ``None``: ``MIN_WIDTH_REL`` (1e-8) times the largest magnitude of the
        column's search range (0.01 for the default range) for continuous columns, 1
        for integer columns.
    max_rows_per_group : int or None, default=None
        Per patient (``X`` already bounded to at most ``k`` rows a patient,
        :doc:`/patients`): the count behind each query moves by at most ``k``
        (:func:`~skdp.mechanisms.sensitivity.group_sensitivity` of
        :func:`~skdp.mechanisms.sensitivity.quantile_utility_sensitivity`), so the
        queries are calibrated to ``fraction * epsilon / k`` (the same noise as
        sensitivity ``k`` at ``fraction * epsilon``) and the reliability rule sees
        that budget; ``fraction * epsilon`` is still what is returned and charged.

    Returns
    -------
    lo, hi : ndarray of shape (d,)
    epsilon_used : float

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import resolve_bounds
    >>> X = np.random.default_rng(0).normal(size=(5000, 2))
    >>> lo, hi, used = resolve_bounds(None, X, epsilon=2.0, rng=np.random.default_rng(1))
    >>> used
    0.2
    >>> resolve_bounds((0, 1), X, epsilon=2.0, rng=np.random.default_rng(1))[2]
    0.0
    >>> try:  # 500 rows: too few for a reliable estimate at this budget
    ...     resolve_bounds(None, X[:500], epsilon=2.0, rng=np.random.default_rng(1))
    ... except ValueError as err:
    ...     print(str(err)[:60])
    bounds=None: estimating bounds privately for 2 column(s) (0,
    """
    shape = np.shape(X)
    if len(shape) not in (1, 2):
        raise ValueError("X must be 1-d or 2-d")
    d = 1 if len(shape) == 1 else shape[1]
    if bounds is not None and not isinstance(bounds, str):
        # public bounds: the data are not read (X may hold non-numeric columns)
        lo, hi = check_bounds(bounds, d, name=name, columns=columns)
        return lo, hi, 0.0
    X = as_float_array(X, name="X")
    if X.ndim == 1:
        X = X[:, None]
    if X.shape[0] == 0:
        raise ValueError(_NO_ROWS)
    opt_in = False
    if isinstance(bounds, str):
        if bounds not in ("data", PRIVATE_OPT_IN):
            raise ValueError(
                f"{_names(name)[0]} must be None, 'private', 'data', a (low, high) pair or a dict"
            )
        if bounds == "data":
            check_finite(X, name="X")
            lo, hi = data_bounds(X, name=_names(name)[0])
            return lo, hi, 0.0
        opt_in = True
    epsilon = check_epsilon(epsilon)
    fraction = float(fraction)
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    check_finite(X, name="X")
    kinds = _check_kinds(kinds, d)
    binary = np.array([k == "binary" for k in kinds])
    if math.isinf(epsilon):
        lo, hi = X.min(axis=0), X.max(axis=0)
        hi = np.where(lo >= hi, lo + 1.0, hi)
        return np.where(binary, 0.0, lo), np.where(binary, 1.0, hi), 0.0
    check_rng(rng)
    if binary.all():
        # every column's support is declared: nothing to estimate, nothing spent
        return np.zeros(d), np.ones(d), 0.0
    used = fraction * epsilon
    # per patient every count moves by up to k: calibrate to used / k (exact, pure DP)
    calibrated = used / group_sensitivity(quantile_utility_sensitivity(), max_rows_per_group)
    s_lo, s_hi = check_bounds(search_range, d, name="search_range")
    sizes = [_grid_size(s_lo[j], s_hi[j], kinds[j]) for j in range(d)]
    labels = list(columns) if columns is not None and len(columns) == d else list(range(d))
    # public inputs only (n, the budget, the quantiles, the grid): refuse, or warn with
    # the opt-in, before anything is read
    _check_estimate_reliable(X.shape[0], calibrated, quantiles, sizes, name, labels, opt_in)
    lo, hi, point_mass = _private_bounds(X, calibrated, rng, search_range, quantiles, method, kinds)
    if min_width is None:
        big = np.maximum(np.abs(s_lo), np.abs(s_hi))
        min_width = np.where([k == "integer" for k in kinds], 1.0, MIN_WIDTH_REL * big)
    min_width = np.where(binary, 0.0, np.broadcast_to(np.asarray(min_width, float), (d,)))
    _warn_if_bounds_too_narrow(lo, hi, min_width, point_mass & ~binary, labels, name)
    return lo, hi, used


def resolve_schema_bounds(schema, X, *, epsilon, rng, fraction=BOUNDS_FRACTION, opt_in=False):
    """Fill a tabular schema's missing numeric bounds privately; return the spend.

    The one place the synthesizers (histogram, marginal, flow, GAN) turn ``bounds=None``
    for some columns into a private estimate: :func:`resolve_bounds` on just those
    columns with ``fraction * epsilon``. Columns whose bounds were declared are not
    read; a column declared ``"integer"`` is searched on
    :func:`integer_grid_candidates`, a column declared ``"binary"`` gets ``(0, 1)``.
    An estimate that cannot be reliable by public quantities is refused
    (``ValueError``) unless ``opt_in`` (the estimator's ``bounds="private"``).

    Parameters
    ----------
    schema : skdp.utils.schema.TabularSchema
    X : DataFrame or array-like
        The private data.
    epsilon : float
        The estimator's total budget (the estimate spends ``fraction * epsilon`` of it).
    rng : numpy.random.Generator
    fraction : float, default=BOUNDS_FRACTION (0.1)
    opt_in : bool, default=False
        Estimate even where the estimate cannot be reliable (with a
        :class:`~skdp.exceptions.BoundsEstimateWarning`) instead of refusing.

    Returns
    -------
    schema : TabularSchema
        With every numeric column bounded.
    epsilon_used : float
        What the estimate spent (0 when nothing was missing, or for ``epsilon=inf``);
        the caller charges it inside its budget.
    """
    missing = schema.missing_bounds()
    if not missing:
        return schema, 0.0
    # only the columns whose bounds are missing are read; their declared kinds are
    # public: integer columns are searched on an integer grid
    kinds = [schema[n].kind if schema[n].kind in _KINDS else "continuous" for n in missing]
    lo, hi, used = resolve_bounds(
        PRIVATE_OPT_IN if opt_in else None,
        schema.numeric_matrix(X, missing),
        epsilon=epsilon,
        rng=rng,
        name="bounds",
        columns=missing,
        fraction=fraction,
        kinds=kinds,
    )
    filled = {n: (float(a), float(b)) for n, a, b in zip(missing, lo, hi, strict=True)}
    return schema.with_bounds(filled), float(used)
