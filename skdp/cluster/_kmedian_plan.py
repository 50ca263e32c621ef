"""The release plan of :class:`~skdp.cluster.SubsampledExpMedian`.

Every public quantity of one ``fit`` is computed here once, before the data are read,
from the parameters, the number of features and the (public) number of rows: which of
the four variants runs, the cost sensitivity ``Delta``, each round's epsilon and
sensitivity, the number of candidate sets, and the schedule of the box search (round 1's
grid, the median step, the local rounds' radii). The plan is the only source of
``privacy_breakdown_`` and ``epsilon_spent_``; the rounds read it and recompute nothing.

With ``groups`` (the patient as the privacy unit, at most ``k = max_rows_per_group``
rows each) every round's sensitivity is ``k`` times the row's, multiplied here once
(:func:`~skdp.mechanisms.sensitivity.group_sensitivity`); the per-row cap ``Delta`` on a
point's cost is unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from skdp.cluster._box_histogram import HIST_MAX_CELLS, HIST_SENSITIVITY, histogram_cells_per_axis
from skdp.cluster._box_median import MEDIAN_SHARE, median_step_applies, window_size
from skdp.cluster._box_search import (
    DEFAULT_ROUND_CANDIDATES,
    FIRST_SHARE,
    MAX_COARSE_SETS,
    ROUND1_WORK,
    box_search_schedule,
    coarse_grid_spec,
    local_step_sensitivity,
)
from skdp.cluster._kmedian_costs import FIXED_BITS
from skdp.mechanisms.sensitivity import (
    count_sensitivity,
    group_sensitivity,
    kmedian_cost_sensitivity,
)
from skdp.utils._parts import part_keys
from skdp.utils.validation import check_bounds, check_finite

__all__ = ["BoxSearchPlan", "KMedianPlan", "MAX_ENUMERATED", "plan_kmedian"]

#: largest number of candidate sets the plain exponential mechanism (``n_candidates=None``)
#: may enumerate
MAX_ENUMERATED = 5_000_000


@dataclass(frozen=True, eq=False)
class BoxSearchPlan:
    """Public schedule of the multi-round box search (``bounds`` without ``candidates``).

    Round 1 is ``first_round``: the noisy histogram on the grid with ``cells`` per axis,
    or the exponential mechanism over ``coarse_sets`` k-subsets (all of them when
    ``coarse_enumerated``) of the coarse grid with ``coarse_axis`` points per axis
    (``None``: ``coarse_points`` uniform draws), each private point scored at the centre
    of its cell of the grid with ``snap_cells`` per axis. ``spacing``: round 1's cell width
    per axis (the radius of the first local round is half of it). Then the median step
    when ``median_step``, then one local round of ``sets_per_round`` candidate sets per
    radius of ``radii``.
    """

    lo: np.ndarray
    hi: np.ndarray
    n_schedule: int
    first_round: str
    cells: int | None
    spacing: np.ndarray
    coarse_axis: int | None
    coarse_points: int
    coarse_sets: int
    coarse_enumerated: bool
    snap_cells: int
    median_step: bool
    radii: tuple[np.ndarray, ...]
    sets_per_round: int


@dataclass(frozen=True, eq=False)
class KMedianPlan:
    """Everything public about one ``fit`` of :class:`~skdp.cluster.SubsampledExpMedian`.

    ``variant``: ``"box_search"`` (the rounds of :class:`BoxSearchPlan` in ``search``),
    ``"enumerate"`` (the exponential mechanism over all ``n_sets`` k-subsets of
    ``candidates``), ``"candidates"`` or ``"box"`` (the subsampled exponential mechanism
    over ``n_sets`` candidate sets drawn from ``candidates`` or uniform in ``box``).
    ``round_epsilons`` and ``round_sensitivities``: each round's epsilon and the
    sensitivity of its quality (one round outside the box search); they compose to
    ``epsilon``. ``cost_sensitivity`` is the cap ``Delta`` on each point's cost.
    ``max_rows_per_group``: the contribution bound ``k`` of a patient-level fit
    (``None`` per row); the round sensitivities are then ``k`` times the row's.
    """

    variant: str
    n_clusters: int
    metric: str
    candidates: np.ndarray | None
    box: tuple[np.ndarray, np.ndarray] | None
    cost_sensitivity: float
    epsilon: float
    n_sets: int
    n_candidates: int
    round_epsilons: tuple[float, ...]
    round_sensitivities: tuple[float, ...]
    search: BoxSearchPlan | None = None
    max_rows_per_group: int | None = None

    @property
    def n_rounds(self) -> int:
        return len(self.round_epsilons)

    @property
    def epsilon_spent(self) -> float:
        """The fit's epsilon (pure DP; the rounds compose sequentially to it)."""
        return float(self.epsilon)

    @property
    def privacy_breakdown(self) -> dict[str, float]:
        """``{"round_t": epsilon_t}``, rounds numbered from 1, or ``{"round": epsilon}``
        for one round (:func:`~skdp.utils._parts.part_keys`)."""
        keys = part_keys("round", self.n_rounds)
        return {k: float(e) for k, e in zip(keys, self.round_epsilons, strict=True)}


def plan_kmedian(est, n_features, n_rows, max_rows_per_group=None) -> KMedianPlan:
    """The plan of ``est.fit`` on ``n_rows`` rows of ``n_features`` features.

    Reads only ``est``'s parameters and the numbers (``n_rows`` is public, as the
    default of ``n_public``; with ``groups`` the rows kept); raises ``ValueError`` on a
    combination that cannot run. ``max_rows_per_group``: ``k`` of a patient-level fit.
    """
    epsilon, _ = est._check_privacy_params()
    k = est.n_clusters
    if est.candidates is None and k > n_rows:
        # as KMeans; the row count is public here (n_public default). With public
        # candidates the thesis's setting allows fewer private points than centres.
        raise ValueError(f"n_clusters={k} must be at most the number of samples")
    V, box = public_domain(est, n_features)
    cost_sensitivity = (
        float(est.sensitivity)
        if est.sensitivity is not None
        else kmedian_cost_sensitivity(candidates=V, bounds=box, metric=est.metric)
    )
    if cost_sensitivity <= 0:
        raise ValueError(
            "the public domain has diameter 0; pass a positive sensitivity or a "
            "larger candidate set / box"
        )
    common = dict(
        n_clusters=k,
        metric=est.metric,
        candidates=V,
        box=box,
        cost_sensitivity=cost_sensitivity,
        max_rows_per_group=max_rows_per_group,
    )
    if V is None and est.n_rounds != 1:
        n_schedule = int(est.n_public) if est.n_public is not None else n_rows
        return _box_search_plan(est, epsilon, n_schedule, common)
    if V is not None and est.n_rounds not in ("auto", 1):
        raise ValueError("n_rounds > 1 needs the box base (bounds without candidates)")
    if V is not None and est.n_candidates is None:
        variant, n_sets = "enumerate", math.comb(V.shape[0], k)
        if n_sets > MAX_ENUMERATED:
            raise ValueError(
                f"n_candidates=None enumerates C({V.shape[0]}, {k}) = {n_sets} subsets, "
                f"more than {MAX_ENUMERATED}; pass an int n_candidates"
            )
    elif est.n_candidates == "auto" and V is None:
        variant, n_sets = "box", DEFAULT_ROUND_CANDIDATES
    elif est.n_candidates == "auto":
        n_sets = math.ceil(6 * k * math.log(V.shape[0])) if V.shape[0] > 1 else 1
        variant = "candidates"
    else:
        variant, n_sets = ("candidates" if V is not None else "box"), int(est.n_candidates)
    return KMedianPlan(
        variant=variant,
        epsilon=epsilon,
        n_sets=int(n_sets),
        n_candidates=int(n_sets),
        round_epsilons=(float(epsilon),),
        round_sensitivities=(float(group_sensitivity(cost_sensitivity, max_rows_per_group)),),
        **common,
    )


def public_domain(est, n_features):
    """Resolve the public candidate set / box; raise on missing public metadata."""
    if est.candidates is not None:
        V = check_finite(np.asarray(est.candidates, dtype=float), name="candidates")
        if V.ndim != 2 or V.shape[1] != n_features:
            raise ValueError(
                f"candidates must have shape (n_points, {n_features}) to match X, got {V.shape}"
            )
        if V.shape[0] < est.n_clusters:
            raise ValueError(
                f"n_clusters={est.n_clusters} exceeds the number of candidates ({V.shape[0]})"
            )
        return V, None
    if est.bounds is None:
        raise ValueError(
            "SubsampledExpMedian needs public metadata: pass candidates (public "
            "candidate centres) or bounds (a public box to draw centres from)"
        )
    if est.base != "uniform":
        raise ValueError(f'base="{est.base}" needs candidates')
    if est.n_candidates is None:
        raise ValueError(
            "with the box base (no candidates) n_candidates must be an int or "
            '"auto": the subsets of a continuous box cannot be enumerated'
        )
    return None, check_bounds(est.bounds, n_features)


def _box_search_plan(est, epsilon, n_schedule, common) -> KMedianPlan:
    """The plan of the box search: round 1 (histogram or coarse grid), the median step
    when it applies, then the local rounds of :func:`box_search_schedule`."""
    k, metric, cost_sensitivity = est.n_clusters, est.metric, common["cost_sensitivity"]
    rows = common["max_rows_per_group"]  # k of a patient-level fit, or None

    def per_unit(row_sensitivity):  # the privacy unit's sensitivity (once, here)
        return float(group_sensitivity(row_sensitivity, rows))

    lo, hi = common["box"]
    d = lo.shape[0]
    # with patients, the selections resolve what epsilon n / k would per row
    n_resolved = n_schedule if rows is None else n_schedule / rows
    hist_sensitivity = HIST_SENSITIVITY if rows is None else per_unit(count_sensitivity())
    cells = None
    if est.first_round != "grid":
        cells = histogram_cells_per_axis(
            d, n_schedule, epsilon * FIRST_SHARE, k, sensitivity=hist_sensitivity
        )
    if est.first_round == "histogram" and cells is None:
        raise ValueError(
            f'first_round="histogram" needs a grid of at most {HIST_MAX_CELLS} cells with '
            f"at least n_clusters={k} of them; {d} features are too many"
        )
    if cells is not None:  # noisy counts on a public grid, then a weighted k-median
        spacing = (hi - lo) / cells
        coarse = dict(coarse_axis=None, coarse_points=0, coarse_sets=0, snap_cells=0)
        coarse.update(coarse_enumerated=False)
        sensitivities = [float(hist_sensitivity)]
    else:  # the exponential mechanism over k-subsets of a coarse public grid
        coarse, spacing = _coarse_round_plan(lo, hi, k, n_schedule)
        sensitivities = [per_unit(cost_sensitivity)]
    radii, eps = box_search_schedule(spacing, hi - lo, epsilon, n_resolved, n_rounds=est.n_rounds)
    eps = [float(e) for e in eps]
    eps_m = MEDIAN_SHARE * float(sum(eps[1:]))
    median_sensitivity = per_unit(1.0)  # the rank utility: 1 per row
    median = est.median_step is True or (
        est.median_step == "auto"
        and median_step_applies(
            n_schedule, k, d, eps_m / median_sensitivity, window_size(spacing, lo, hi)
        )
    )
    if median:  # the median step takes its share of the local rounds' budget
        eps = [eps[0], eps_m] + [e * (1 - MEDIAN_SHARE) for e in eps[1:]]
        sensitivities.append(median_sensitivity)
    # each point's rounded term moves by at most rho + 2 u (u = Delta 2^-40, one grid
    # step plus the scaling's rounding), so the quality by 2 rho + 4 u
    slack = 4.0 * math.ldexp(cost_sensitivity, -FIXED_BITS)
    for radius in radii:
        sensitivities.append(
            per_unit(min(cost_sensitivity, local_step_sensitivity(radius, metric) + slack))
        )
    m = DEFAULT_ROUND_CANDIDATES if est.n_candidates == "auto" else int(est.n_candidates)
    search = BoxSearchPlan(
        lo=lo,
        hi=hi,
        n_schedule=int(n_schedule),
        first_round="histogram" if cells is not None else "grid",
        cells=int(cells) if cells is not None else None,
        spacing=spacing,
        median_step=bool(median),
        radii=tuple(radii),
        sets_per_round=m,
        **coarse,
    )
    return KMedianPlan(
        variant="box_search",
        epsilon=epsilon,
        n_sets=m,
        n_candidates=int(coarse["coarse_sets"] + m * len(radii)),
        round_epsilons=tuple(eps),
        round_sensitivities=tuple(sensitivities),
        search=search,
        **common,
    )


def _coarse_round_plan(lo, hi, k, n_schedule):
    """Public numbers of round 1 over the k-subsets of a coarse grid, and its spacing.

    The private points are scored at the centres of their cells of a grid twice as fine
    (each point's term stays in ``[0, Delta]``) so that many more subsets can be scored:
    all of them when that costs at most ``ROUND1_WORK`` distance lookups. The number of
    subsets reads public numbers only (the grid and ``n_schedule``), never the occupied
    cells.
    """
    axis, n_points, spacing = coarse_grid_spec(lo, hi, k)
    snap = max(int(round(float(np.max((hi - lo) / np.where(spacing > 0, spacing, 1.0))))) * 2, 2)
    n_scored = min(n_schedule, snap ** lo.shape[0])  # public bound on occupied cells
    n_sets = math.comb(n_points, k)
    budget = max(MAX_COARSE_SETS, ROUND1_WORK // max(n_scored * k, 1))
    coarse = dict(
        coarse_axis=axis,
        coarse_points=int(n_points),
        coarse_sets=int(min(n_sets, budget)),
        coarse_enumerated=n_sets <= budget,
        snap_cells=snap,
    )
    return coarse, spacing
