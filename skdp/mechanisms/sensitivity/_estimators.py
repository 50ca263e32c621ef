"""Sensitivities of the estimators' own queries.

Functional mechanism and sufficient statistics of linear regression, histograms, the
k-median cost, the ILP coverage counts and the ExpM+NF squared-loss utility; public via
:mod:`skdp.mechanisms.sensitivity`.
"""

from __future__ import annotations

import math

from skdp.mechanisms.sensitivity._generic import group_sensitivity


def functional_mechanism_sensitivity(n_features, *, fit_intercept=True, replace_one=False):
    """L1 sensitivity of the least-squares objective's coefficients (functional mechanism).

    The objective ``sum_i (y_i - w . x~_i)^2`` has degree-2 coefficients
    ``M = X~^T X~`` (all ``d'^2`` entries) and degree-1 coefficients ``alpha = -2 X~^T y``
    (``d'`` entries), where ``X~`` is ``X`` scaled to ``[-1, 1]`` plus, with
    ``fit_intercept``, a column of ones, so ``d' = n_features + fit_intercept``. One row
    with ``|x~_j| <= 1`` and ``|y| <= 1`` moves ``[vec(M), alpha]`` by at most
    ``sum_{j,l} |x~_j x~_l| + sum_j |2 y x~_j| <= d'^2 + 2 d'`` in L1
    (Zhang et al. 2012; Lantz 2016 §5.4.2; the brute-force test in
    ``tests/mechanisms/`` shows the bound is attained).

    Neighbouring relation: **add/remove one row** (library default,
    :ref:`neighbouring-relation`): ``Delta = d'^2 + 2 d'``. With ``replace_one=True`` the
    replace-one bound ``2 d'^2 + 4 d'`` (the authors' Matlab ``Functional_Linear.m``) is
    returned.

    Parameters
    ----------
    n_features : int
        Number of features ``p`` (not counting the intercept column).
    fit_intercept : bool, default=True
    replace_one : bool, default=False

    Returns
    -------
    float
    """
    p = int(n_features)
    if p < 0:
        raise ValueError("n_features must be >= 0")
    d = p + int(bool(fit_intercept))
    delta = float(d * d + 2 * d)
    return 2.0 * delta if replace_one else delta


def histogram_sensitivity(*, replace_one=False, max_rows_per_group=None, norm="l1"):
    """L1 (or L2) sensitivity of a full histogram (vector of cell counts over a public
    domain), per row or per patient.

    Every record falls in exactly one cell, so adding or removing one record changes one
    count by 1: ``Delta = 1`` and Laplace noise of scale ``1/epsilon`` on every cell is
    epsilon-DP (Lantz 2016 §5.4.1; Vinterbo 2012).

    Neighbouring relation: **add/remove one row** (library default,
    :ref:`neighbouring-relation`). With ``replace_one=True`` two counts change by 1 each:
    ``Delta = 2`` (L2: ``sqrt(2)``).

    With ``max_rows_per_group=k``: **add/remove one patient with all their rows**, each
    patient bounded to at most ``k`` rows (:doc:`/patients`). The patient's rows change
    the counts by ``v >= 0`` cell-wise with ``sum(v) <= k``, so ``||v||_1 <= k`` and
    ``||v||_2 <= ||v||_1 <= k``, both attained when the ``k`` rows share one cell:
    ``Delta_1 = Delta_2 = k`` (replace one patient: ``2k`` and ``sqrt(2) k``, attained
    by two patients of ``k`` rows in two different cells). Every marginal of a table is
    a histogram over its own cells, so the same bounds hold for each marginal; a score
    ``||M(D) - q||_1 - c`` with ``q`` and ``c`` independent of ``D`` (MST's and AIM's
    selection scores) moves by at most ``||M(D) - M(D')||_1``, the L1 bound. A
    zCDP measurement's ``rho = Delta_2^2 / (2 sigma^2)`` grows by ``k^2``, a Laplace
    one's ``epsilon = Delta_1 / b`` by ``k`` (the tests in ``tests/mechanisms/``
    enumerate every neighbouring pair on a small domain).

    Parameters
    ----------
    replace_one : bool, default=False
    max_rows_per_group : int or None, default=None
        ``k`` of a patient-level release; ``None``: per row.
    norm : {"l1", "l2"}, default="l1"

    Returns
    -------
    float
        The L1 or L2 sensitivity of the vector of counts.

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import histogram_sensitivity
    >>> histogram_sensitivity(), histogram_sensitivity(max_rows_per_group=5, norm="l2")
    (1.0, 5.0)
    """
    if norm not in ("l1", "l2"):
        raise ValueError("norm must be 'l1' or 'l2'")
    if norm == "l1":
        row = 2.0 if replace_one else 1.0
    else:
        row = math.sqrt(2.0) if replace_one else 1.0
    return group_sensitivity(row, max_rows_per_group)  # the row's when k is None


def clipped_histogram_sensitivity(max_rows_per_group, *, clip_norm=None, norm="l2"):
    """L2 (or L1) sensitivity of a histogram summed from per-patient count vectors
    clipped in L2 norm.

    Neighbouring relation: **add/remove one patient with all their rows**, at most
    ``k = max_rows_per_group`` of them (:doc:`/patients`). Each patient's count vector
    ``v`` over the cells (non-negative, ``||v||_1 <= k``) enters the sum as ``s v``
    with ``s = min(1, C / ||v||_2)``, ``C = clip_norm``. Then ``||s v||_2 <= C``
    (attained by ``k >= C`` rows in one cell) and ``||s v||_1 <= min(||v||_1,
    sqrt(nnz(v)) ||s v||_2) <= min(k, sqrt(k) C)`` (``v`` has at most ``k`` non-zero
    cells; attained with ``C = sqrt(k)`` by ``k`` rows in ``k`` cells, which are not
    clipped). The default ``C = sqrt(k)`` keeps a patient whose rows fall in distinct
    cells whole and gives L2 sensitivity ``sqrt(k)`` against the ``k`` of the
    unclipped histogram (:func:`histogram_sensitivity`), at the price of weighting a
    patient with several rows in one cell by ``s < 1``. The release scales ``s v`` by a
    public resolution ``R`` and rounds every cell down, which keeps both bounds (times
    ``R``) on integers, so the discrete Gaussian applies
    (:class:`~skdp.synthesis.DPMarginalSynthesizer` with ``contribution="clip"``;
    the brute-force test in ``tests/mechanisms/`` enumerates every patient of at most
    ``k`` rows on a small domain).

    Parameters
    ----------
    max_rows_per_group : int
        ``k``, at least 1.
    clip_norm : float or None, default=None
        ``C > 0``; ``None``: ``sqrt(k)``.
    norm : {"l2", "l1"}, default="l2"

    Returns
    -------
    float

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import clipped_histogram_sensitivity
    >>> clipped_histogram_sensitivity(4), clipped_histogram_sensitivity(4, norm="l1")
    (2.0, 4.0)
    """
    if norm not in ("l1", "l2"):
        raise ValueError("norm must be 'l1' or 'l2'")
    k = int(max_rows_per_group)
    if k < 1 or k != max_rows_per_group:
        raise ValueError("max_rows_per_group must be an integer >= 1")
    if clip_norm is None:  # C = sqrt(k): L1 exactly k
        return math.sqrt(k) if norm == "l2" else float(k)
    c = float(clip_norm)
    if not c > 0 or math.isinf(c):
        raise ValueError("clip_norm must be a positive finite number")
    return min(c, float(k)) if norm == "l2" else min(float(k), math.sqrt(k) * c)


def kmedian_cost_sensitivity(
    *, candidates=None, bounds=None, metric="euclidean", max_rows_per_group=None
):
    """Sensitivity of the (truncated) k-median cost: the diameter of the public domain.

    ``Delta = max_{v, w} d(v, w)`` over the public candidate set ``V`` (``candidates``)
    or over the public box ``bounds = (lo, hi)`` (Lantz 2016 §8.3.1; Lantz, Boyd and
    Page 2015). It depends on public quantities only.

    Neighbouring relation: **add, remove or move one private point** (the thesis's
    relation for ch. 8, which includes the library default add/remove). The quality
    ``q(D, F) = -sum_{x in D} min(Delta, d(x, F))`` then changes by at most ``Delta`` for
    any centre set ``F``: one term appears, disappears or changes, and every term lies in
    ``[0, Delta]``. Without the truncation the same bound holds whenever private points
    lie in the convex hull of ``V`` (Euclidean/Manhattan distance to a point is convex,
    so its maximum over the hull is attained at a point of ``V``). Tight: removing a
    point at distance ``Delta`` from ``F``.

    With ``max_rows_per_group = k`` (neighbouring relation: **add/remove one patient
    with all their rows**, at most ``k`` of them; :doc:`/patients`) the quality, a sum
    of per-row terms each in ``[0, Delta]``, changes by at most ``k Delta``
    (:func:`group_sensitivity`); the cap on each point's term stays ``Delta``. Tight:
    ``k`` rows at distance ``Delta`` from ``F``.

    Parameters
    ----------
    candidates : array-like of shape (n_points, n_features), optional
    bounds : (lo, hi) pair of arrays of shape (n_features,), optional
        Used when ``candidates`` is None.
    metric : {"euclidean", "manhattan"}, default="euclidean"
    max_rows_per_group : int or None, default=None
        ``k`` of a patient-level release; ``None``: per row.

    Returns
    -------
    float
    """
    import numpy as np
    from scipy.spatial.distance import cdist

    from skdp.mechanisms.sensitivity._generic import group_sensitivity

    scipy_metric = {"euclidean": "euclidean", "manhattan": "cityblock"}[metric]
    if candidates is not None:
        V = np.asarray(candidates, dtype=float)
        if V.ndim != 2:
            raise ValueError("candidates must be a 2-D array")
        best = 0.0
        step = max(1, (1 << 22) // max(V.shape[0], 1))
        for i in range(0, V.shape[0], step):
            best = max(best, float(cdist(V[i : i + step], V, metric=scipy_metric).max()))
        return group_sensitivity(best, max_rows_per_group)
    if bounds is None:
        raise ValueError("pass candidates or bounds")
    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    width = np.abs(hi - lo)
    diameter = float(np.sqrt((width**2).sum()) if metric == "euclidean" else width.sum())
    return group_sensitivity(diameter, max_rows_per_group)


def ilp_query_alpha(epsilon, n_clauses, *, n_rounds=1, n_levels=1, max_rows_per_group=None):
    """Inverse scale of the two-sided geometric noise on one ILP coverage count.

    ``alpha = epsilon / (n_rounds * n_levels * n_clauses)`` (Lantz 2016 Thm 6.6 + Thm 6.1 +
    composition; Zeng et al. 2014).
    The ``2 * n_clauses`` counts ``(q+_h(E+), q_h(E-))`` of one batch of ``n_clauses``
    clauses have L1 sensitivity ``n_clauses`` (one added example changes, for each
    clause, at most one of its two counts, by 1; attained by a positive all-ones row), so
    ``G(alpha)`` on each with ``alpha = epsilon_batch / n_clauses`` is
    ``epsilon_batch``-DP; a theory of ``n_rounds`` clauses searched over ``n_levels``
    levels gives ``epsilon_batch = epsilon / (n_rounds * n_levels)``.

    * smart reduction (Alg. 4): ``n_levels = max_clause_length + 1`` and ``n_clauses =``
      ``beta_i``, the number of clauses evaluated at level ``i`` (the thesis's "k
      predicates" is a typo for level ``i``);
    * naive reduction (Alg. 3): ``n_levels = 1`` and ``n_clauses`` = the size of the
      whole lattice searched, ``sum_{i <= l} C(|H_b|, i)``.

    ``G(alpha)`` has pmf ``proportional to exp(-alpha |s|)``: ``alpha`` is an *inverse*
    scale (larger = less noise).

    Neighbouring relation: **add/remove one example** (ch. 6; the library default).
    With ``max_rows_per_group = k``: **add/remove one patient with all their rows**, at
    most ``k`` of them (:doc:`/patients`); each row changes one of each clause's two
    counts by 1, so the batch's L1 sensitivity is ``k n_clauses`` (attained by ``k``
    positive all-ones rows) and ``alpha`` is ``k`` times smaller.

    Returns
    -------
    float
        ``inf`` when ``epsilon`` is ``inf`` (no noise).
    """
    n_clauses, n_rounds, n_levels = int(n_clauses), int(n_rounds), int(n_levels)
    if min(n_clauses, n_rounds, n_levels) < 1:
        raise ValueError("n_clauses, n_rounds and n_levels must be >= 1")
    if max_rows_per_group is None:
        return float(epsilon) / (n_rounds * n_levels * n_clauses)
    from skdp.utils._groups import check_max_rows_per_group

    k = check_max_rows_per_group(max_rows_per_group)
    return float(epsilon) / (n_rounds * n_levels * n_clauses * k)


def ilp_epsilon_lower_bound(n_atoms, delta, eta, n_records, *, form="proof"):
    """Smallest epsilon any epsilon-DP, (delta, eta)-useful ILP algorithm can have.

    Lantz 2016 Theorem 6.5 (Zeng et al. 2014); the theorem as printed does not match
    its proof, hence the two forms below. With ``n`` atoms and ``|D|`` records, group
    privacy over the
    ``2((1 - delta)|D| + 1)`` rows in which the proof's two datasets differ gives

    * ``form="proof"`` (default, what the proof shows):
      ``epsilon >= (n ln 2 + ln(1 - eta)) / (2 ((1 - delta) |D| + 1))``;
    * ``form="thesis"`` (the theorem as printed):
      ``epsilon >= n ln 2 (1 - eta) / (2 ((1 - delta) |D| + 1))``.

    Neighbouring relation: **add/remove one example** (ch. 6).

    Parameters
    ----------
    n_atoms : int
        Number of atoms ``n`` of the hypothesis language.
    delta : float in [0, 1]
        Usefulness fraction.
    eta : float in [0, 1)
        Failure probability.
    n_records : int
    form : {"proof", "thesis"}

    Returns
    -------
    float

    Examples
    --------
    >>> round(ilp_epsilon_lower_bound(10, 0.9, 0.1, 100), 5)
    0.31028
    >>> round(ilp_epsilon_lower_bound(10, 0.9, 0.1, 100, form="thesis"), 5)
    0.28356
    """
    import math

    if form not in ("proof", "thesis"):
        raise ValueError(f"form must be 'proof' or 'thesis', got {form!r}")
    if not 0.0 <= delta <= 1.0:
        raise ValueError("delta must be in [0, 1]")
    if not 0.0 <= eta < 1.0:
        raise ValueError("eta must be in [0, 1)")
    if n_atoms < 0 or n_records < 0:
        raise ValueError("n_atoms and n_records must be >= 0")
    denom = 2.0 * ((1.0 - delta) * n_records + 1.0)
    if form == "proof":
        return (n_atoms * math.log(2.0) + math.log1p(-eta)) / denom
    return n_atoms * math.log(2.0) * (1.0 - eta) / denom


def expm_squared_loss_sensitivity(lo, hi, *, n_classes=None):
    """Sensitivity ``s`` of the summed squared-loss utility of the ExpM+NF estimators.

    ``u(theta; D) = -(sum_{rows} ||y_hat(x, theta) - y||^2 + r(theta))`` with targets and
    model outputs confined to ``[lo, hi]`` for every row and every ``theta`` (a sigmoid or
    clipped output) and a data-independent ``r``. Each row's loss lies in ``[0, (hi - lo)^2]``,
    so ``s = (hi - lo)^2`` (Bridges, Tombs & Stanley 2023, Thm 3.1). The bound holds, and is
    attained, under **both** add/remove one row (``|Δu| = l(z, theta)``) and replace-one
    (``|Δu| = |l(z) - l(z')|``); no bound on the features is needed. With
    ``n_classes = K >= 2`` (one-hot targets, softmax outputs, loss
    summed over the ``K`` outputs, ``lo=0, hi=1``) the per-row loss lies in ``[0, 2]`` and
    ``s = 2`` (``p = e_k``, ``y = e_j`` give ``||p - y||^2 = 2``; Cor. 3.2 of Bridges,
    Tombs & Stanley 2023 states ``s <= 1``, which is wrong for that case).

    The exponential mechanism then uses the exponent ``epsilon * u / (2 s)``.

    Parameters
    ----------
    lo, hi : float
        Public bounds of targets and outputs, ``lo < hi``, finite.
    n_classes : None or int, default=None
        ``None`` for a scalar output; ``K >= 2`` for one-hot/softmax outputs (needs
        ``lo=0``, ``hi=1``).

    Returns
    -------
    float
    """
    import math

    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError("bounds must be finite with lo < hi")
    if n_classes is None:
        return (hi - lo) ** 2
    if int(n_classes) < 2 or (lo, hi) != (0.0, 1.0):
        raise ValueError("n_classes must be >= 2 with bounds (0, 1)")
    return 2.0


def _check_n_features(n_features, fit_intercept):
    p = int(n_features)
    if p < 0:
        raise ValueError("n_features must be >= 0")
    d = p + int(bool(fit_intercept))
    if d == 0:
        raise ValueError("no coefficients: n_features=0 without an intercept")
    return p, d


def sufficient_statistics_sensitivity(
    n_features, *, fit_intercept=True, target_weight=1.0, norm="l1"
):
    """Sensitivity of the distinct least-squares sufficient statistics (add/remove one row).

    The released vector is the upper triangle (diagonal included) of ``X~^T X~`` followed
    by ``target_weight * X~^T y~``, where every row ``x~`` of ``X~`` is a feature row
    scaled into ``[-1, 1]^p`` plus, with ``fit_intercept``, a constant 1, and
    ``|y~| <= 1``. With ``fit_intercept`` the corner entry ``sum_i 1 * 1 = n`` is left
    out: ``n`` is public. ``d' = p + fit_intercept``.

    Neighbouring relation: **add/remove one row**, ``n`` public. Adding or removing a
    row moves every statistic by that row's own term, so the sensitivity is the largest
    norm of one row's terms:

    * ``norm="l1"``: ``sum_{j<=l<=p} |x_j x_l| + fit_intercept * sum_j |x_j|
      + w |y~| (sum_j |x_j| + fit_intercept) <= p (p + 1) / 2 + fit_intercept * p + w d'``
      (that is ``d' (d' + 1) / 2 - 1 + w d'`` with an intercept);
    * ``norm="l2"``: the square root of ``sum_{j<=l<=p} x_j^2 x_l^2 + fit_intercept *
      sum_j x_j^2 + w^2 y~^2 (sum_j x_j^2 + fit_intercept) <= p (p + 1) / 2 +
      fit_intercept * p + w^2 d'``.

    Both bounds are attained at a corner of the box (every ``|x_j| = 1``, ``|y~| = 1``).
    Compared with the functional mechanism's ``d'^2 + 2 d'``
    (:func:`functional_mechanism_sensitivity`, which perturbs every entry of the
    symmetric matrix and counts each off-diagonal term twice), the L1 sensitivity of the
    distinct entries is about half, for the same information.

    Parameters
    ----------
    n_features : int
        Number of features ``p`` (not counting the intercept column).
    fit_intercept : bool, default=True
    target_weight : float, default=1.0
        Weight ``w > 0`` of the ``X~^T y~`` block in the released vector.
    norm : {"l1", "l2"}, default="l1"

    Returns
    -------
    float

    References
    ----------
    Y.-X. Wang. "Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain." UAI 2018 (sufficient
    statistics perturbation).

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import sufficient_statistics_sensitivity
    >>> sufficient_statistics_sensitivity(3)  # 6 + 3 + 4
    13.0
    >>> round(sufficient_statistics_sensitivity(3, norm="l2") ** 2, 9)
    13.0
    """
    import math

    p, d = _check_n_features(n_features, fit_intercept)
    w = float(target_weight)
    if not (math.isfinite(w) and w > 0):
        raise ValueError("target_weight must be a finite number > 0")
    gram = p * (p + 1) / 2 + (p if fit_intercept else 0)
    if norm == "l1":
        return float(gram + w * d)
    if norm == "l2":
        return float(math.sqrt(gram + w * w * d))
    raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}")


def target_moments_sensitivity(*, norm="l1"):
    """Sensitivity of the pair ``(sum y~, sum (y~^2 - 1/2))`` (add/remove one row).

    The target is clipped and scaled into ``[-1, 1]``; the second sum is shifted by
    ``1/2`` per row so that each row's term ``y~^2 - 1/2`` lies in ``[-1/2, 1/2]``.
    :class:`~skdp.linear_model.DPLinearRegression` releases the pair to centre the
    target on a private mean and to scale its ridge by a private variance.

    Neighbouring relation: **add/remove one row**, ``n`` public. Adding or removing a
    row moves the pair by that row's own terms ``(y~, y~^2 - 1/2)``, so the sensitivity
    is their largest norm over ``|y~| <= 1``: ``|y~| + |y~^2 - 1/2|`` is largest at
    ``|y~| = 1`` (``1.5``; at ``y~ = 0`` it is ``0.5``, and on ``y~^2 <= 1/2`` it is
    ``|y~| + 1/2 - y~^2 <= 1/4 + 1/2``), and ``y~^2 + (y~^2 - 1/2)^2`` too
    (``sqrt(5) / 2``). Both are attained at ``y~ = +-1``.

    Parameters
    ----------
    norm : {"l1", "l2"}, default="l1"

    Returns
    -------
    float
        ``1.5`` (L1) or ``sqrt(5) / 2`` (L2).

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import target_moments_sensitivity
    >>> target_moments_sensitivity()
    1.5
    """
    import math

    if norm == "l1":
        return 1.5
    if norm == "l2":
        return math.sqrt(1.25)
    raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}")


def gram_min_eigenvalue_sensitivity(n_features, *, fit_intercept=True):
    """Sensitivity of the smallest eigenvalue of ``X~^T X~`` (add/remove one row).

    Rows are scaled into ``[-1, 1]^p`` and, with ``fit_intercept``, extended by a
    constant 1, so ``||x~||^2 <= d' = p + fit_intercept``. Adding a row gives
    ``X~^T X~ + x~ x~^T``; by Weyl's inequality every eigenvalue moves up by between 0
    and ``||x~||^2``, so ``0 <= lambda_min(after) - lambda_min(before) <= d'`` (and
    removing a row is the same step backwards). The bound is attained: take a Gram
    matrix whose smallest eigenvector is ``x~ = (1, ..., 1)`` and whose other
    eigenvalues exceed the smallest by more than ``d'``.

    Neighbouring relation: **add/remove one row**. Returns ``d'`` (an L1 and L2
    sensitivity: the value is a scalar).

    Parameters
    ----------
    n_features : int
        Number of features ``p`` (not counting the intercept column).
    fit_intercept : bool, default=True

    Returns
    -------
    float

    References
    ----------
    Y.-X. Wang. "Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain." UAI 2018, Algorithm 2
    (AdaSSP), where ``||X||^2`` plays the role of ``d'``.

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import gram_min_eigenvalue_sensitivity
    >>> gram_min_eigenvalue_sensitivity(3), gram_min_eigenvalue_sensitivity(3, fit_intercept=False)
    (4.0, 3.0)
    """
    _, d = _check_n_features(n_features, fit_intercept)
    return float(d)
