"""The one private release behind every skdp survival curve and test: a noisy histogram
of ``(stratum, interval, status)`` on a public time grid, and its post-processing.

A row falls in one cell: its stratum (the arm of a trial; one stratum for a single
curve), the grid interval that holds its time (:func:`~skdp.survival._grid.interval_of`)
or, for a row still followed at the horizon ``max_time``, one extra bin after the last
interval, and its status (column 0 censored, column ``c >= 1`` the event of type
``c``; the extra bin only has censored rows: its other cells are released and
discarded). Adding or removing one row changes one cell by one: L1 sensitivity 1; a
patient with at most ``k`` rows changes at most ``k`` cells by one in total: L1
sensitivity ``k`` (:func:`skdp.mechanisms.sensitivity.group_sensitivity`). Integer
discrete Laplace noise of scale ``k / epsilon`` on every cell
(:func:`skdp.mechanisms.add_geometric`) makes the histogram exactly ``epsilon``-DP. The
number at risk (suffix sums), the hazards, the curves, their bands and tests read only
the noisy histogram and public inputs: post-processing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from skdp.mechanisms import add_geometric
from skdp.mechanisms.sensitivity import count_sensitivity, group_sensitivity

__all__ = [
    "HistogramPlan",
    "add_cell_noise",
    "default_logrank_intervals",
    "default_n_intervals",
    "fit_curves",
    "noisy_histogram",
    "simulate_histograms",
]


def default_n_intervals(epsilon):
    """The number of equal grid intervals used when neither ``time_grid`` nor
    ``n_intervals`` is given: a public rule of ``epsilon`` only.

    Finer grids follow the curve more closely but add one noisy cell per interval to
    every number at risk and cumulative hazard (the noise of ``H(t)`` grows like the
    square root of the number of intervals before ``t``): ``round(40 sqrt(epsilon))``
    clipped to ``[10, 100]`` (40 at ``epsilon = 1``, 13 at ``epsilon = 0.1``, 100 for
    ``epsilon >= 6.25`` and ``inf``).
    """
    eps = float(epsilon)
    if math.isinf(eps):
        return 100
    return int(np.clip(round(40.0 * math.sqrt(eps)), 10, 100))


def default_logrank_intervals(epsilon):
    """The default number of equal grid intervals of :func:`dp_logrank_test`: a public
    rule of ``epsilon`` only, coarser than a curve's.

    The noise adds about ``m sigma^2 / 2`` to the variance of the two-arm log-rank
    numerator (``m`` intervals, ``sigma^2 = 2 / epsilon^2`` per cell) while a coarser
    grouping loses little power under proportional hazards: ``round(10 epsilon)``
    clipped to ``[4, 20]`` (10 at ``epsilon = 1``, 4 at ``epsilon <= 0.4``; 100 at
    ``inf``). In skdp's simulations (n = 2,000, hazard ratio 1.2) it raised the power
    at ``epsilon = 0.3`` from 0.60 (20 intervals) to 0.78 and kept it at ``epsilon = 1``.
    """
    eps = float(epsilon)
    if math.isinf(eps):
        return 100
    return int(np.clip(round(10.0 * eps), 4, 20))


@dataclass(frozen=True)
class HistogramPlan:
    """Budget, sensitivity and noise of one noisy survival histogram.

    Attributes
    ----------
    epsilon : float
        The whole budget of the release (one histogram; ``inf``: exact counts).
    n_strata, n_intervals, n_columns : int
        Arms, grid intervals, statuses (censored + event types). The histogram has
        shape ``(n_strata, n_intervals + 1, n_columns)``: the extra bin holds the rows
        followed past the horizon.
    sensitivity : float
        Its L1 sensitivity: 1 per row, ``k`` per patient of at most ``k`` rows.
    noise_scale : float
        The discrete Laplace scale ``sensitivity / epsilon`` (0 at ``epsilon = inf``).
    max_rows_per_group : int or None
        ``k`` of a patient-level release; ``None`` per row.
    """

    epsilon: float
    n_strata: int
    n_intervals: int
    n_columns: int
    sensitivity: float
    noise_scale: float
    max_rows_per_group: int | None = None

    @classmethod
    def build(cls, *, epsilon, n_strata, n_intervals, n_columns, max_rows_per_group=None):
        """The plan from public inputs only."""
        sens = float(group_sensitivity(count_sensitivity(), max_rows_per_group))
        eps = float(epsilon)
        scale = 0.0 if math.isinf(eps) else sens / eps
        return cls(eps, int(n_strata), int(n_intervals), int(n_columns), sens, scale,
                   max_rows_per_group)  # fmt: skip

    @property
    def shape(self):
        return (self.n_strata, self.n_intervals + 1, self.n_columns)

    @property
    def breakdown(self):
        """``{"histogram": epsilon}``: the only charged part."""
        return {"histogram": self.epsilon}

    @property
    def noise_variance(self):
        """Variance of one cell's discrete Laplace noise, ``2 r / (1 - r)^2`` with
        ``r = exp(-1 / scale)`` (0 without noise)."""
        if self.noise_scale == 0.0:
            return 0.0
        r = math.exp(-1.0 / self.noise_scale)
        return 2.0 * r / (1.0 - r) ** 2


def noisy_histogram(strata, intervals, status, plan, rng):
    """The released histogram, ``int64`` of shape ``plan.shape``: each row's cell counted
    once, plus discrete Laplace noise of scale ``plan.noise_scale`` on every cell."""
    cells = (np.asarray(strata) * (plan.n_intervals + 1) + intervals) * plan.n_columns + status
    size = int(np.prod(plan.shape))
    counts = np.bincount(cells.astype(np.int64), minlength=size).astype(np.int64)
    return add_cell_noise(counts, plan, rng)


def add_cell_noise(counts, plan, rng):
    """The mechanism on exact cell counts (flat or shaped): discrete Laplace noise of
    scale ``plan.noise_scale`` on every cell; ``int64`` of shape ``plan.shape``."""
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if plan.noise_scale > 0.0:
        counts = add_geometric(counts, sensitivity=plan.sensitivity, epsilon=plan.epsilon, rng=rng)
    counts = counts.reshape(plan.shape)
    counts[:, -1, 1:] = 0  # no event lies past the horizon: discarded (post-processing)
    return counts


def _isotonic(values, increasing):
    """Least-squares projection onto monotone sequences (pool adjacent violators)."""
    y = np.asarray(values, dtype=np.float64)
    y = y if increasing else -y
    means, sizes = [], []
    for v in y.tolist():
        mean, size = v, 1
        while means and means[-1] > mean:
            prev_mean, prev_size = means.pop(), sizes.pop()
            mean = (prev_mean * prev_size + mean * size) / (prev_size + size)
            size += prev_size
        means.append(mean)
        sizes.append(size)
    out = np.repeat(means, sizes)
    return out if increasing else -out


def at_risk(counts):
    """Number at risk at the start of each bin, shape ``(..., m + 1)`` for counts
    ``(..., m + 1, C)`` (the last entry: followed past the horizon): the suffix sums of
    the rows leaving in each bin, projected onto non-increasing, non-negative sequences
    (isotonic regression; exact counts are left unchanged)."""
    exits = np.asarray(counts, dtype=np.float64).sum(axis=-1)
    n_risk = np.cumsum(exits[..., ::-1], axis=-1)[..., ::-1]
    flat = n_risk.reshape(-1, n_risk.shape[-1])
    for i in np.flatnonzero((np.diff(flat, axis=-1) > 0).any(axis=-1)):
        flat[i] = _isotonic(flat[i], increasing=False)
    return np.maximum(flat.reshape(n_risk.shape), 0.0)


def fit_curves(counts):
    """Curves of one stratum from its (noisy) histogram ``counts`` of shape
    ``(m + 1, C)`` (the last row: followed past the horizon).

    Returns ``(n_risk, hazard, survival)``: the projected number at risk ``(m,)``, the
    cumulative cause-specific hazards at the grid edges ``(m + 1, C - 1)`` and the
    overall survival at the edges ``(m + 1,)``.

    The cumulative number of events of each type is projected onto non-decreasing
    sequences from 0 (isotonic regression on the count scale, where every interval's
    noise has the same variance; projecting the cumulative hazard instead lets the
    huge noisy increments of the tail, where few are at risk, flatten the whole curve).
    Its increments ``d_j >= 0`` over the life-table denominator ``n_j - c_j / 2`` (rows
    censored inside an interval count half) are the Nelson--Aalen steps; ``S`` is the
    product of ``1 - q_j``, ``q_j`` the all-cause step clipped to ``[0, 1]``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n_risk = at_risk(counts)[:-1]
    counts = counts[:-1]
    denom = np.maximum(n_risk - np.maximum(counts[:, 0], 0.0) / 2.0, 1.0)
    events = np.vstack([np.zeros(counts.shape[1] - 1), np.cumsum(counts[:, 1:], axis=0)])
    for c in range(events.shape[1]):
        if (np.diff(events[:, c]) < 0).any():
            events[:, c] = _isotonic(events[:, c], increasing=True)
    steps = np.maximum(np.diff(events, axis=0), 0.0) / denom[:, None]
    hazard = np.vstack([np.zeros(steps.shape[1]), np.cumsum(steps, axis=0)])
    q = np.clip(steps.sum(axis=1), 0.0, 1.0)
    survival = np.r_[1.0, np.cumprod(1.0 - q)]
    return n_risk, hazard, survival


def cause_increments(hazard, survival):
    """Cumulative incidence of each cause at the edges, ``(m + 1, C - 1)``: the
    Aalen--Johansen sums ``sum_j S(e_j) dH_c,j``, with the increments scaled so that
    the causes' hazards in one interval add up to at most 1."""
    steps = np.diff(hazard, axis=0)
    total = steps.sum(axis=1)
    scale = np.where(total > 1.0, 1.0 / np.maximum(total, 1e-300), 1.0)
    inc = survival[:-1, None] * steps * scale[:, None]
    return np.vstack([np.zeros(steps.shape[1]), np.cumsum(inc, axis=0)])


def _model(counts):
    """A generative model of one stratum read off its noisy histogram: the number at the
    start, and per interval the probabilities of each event type and of censoring for a
    row at risk."""
    n_risk, hazard, survival = fit_curves(counts)
    n_past = at_risk(counts)[-1]
    steps = np.clip(np.diff(hazard, axis=0), 0.0, None)
    total = steps.sum(axis=1)
    q = np.clip(total, 0.0, 1.0)
    share = np.where(total[:, None] > 0, steps / np.maximum(total, 1e-300)[:, None], 0.0)
    p_event = q[:, None] * share
    nxt = np.r_[n_risk[1:], n_past]
    exit_rate = np.where(n_risk > 0, (n_risk - nxt) / np.maximum(n_risk, 1e-300), 0.0)
    p_cens = np.clip(exit_rate - q, 0.0, 1.0 - q)
    return int(round(n_risk[0])), p_event, p_cens


def simulate_histograms(counts, plan, rng, n_draws, *, pooled=None):
    """``n_draws`` histograms drawn from the model fitted to the noisy ``counts``
    ``(G, m, C)``, each passed through the same mechanism (fresh discrete Laplace noise
    of the plan's scale): shape ``(n_draws, G, m + 1, C)``.

    A parametric bootstrap: each stratum starts with its estimated number of rows, which
    leave interval by interval with the estimated event-type and censoring
    probabilities; those left after the last interval fill the bin past the horizon. With
    ``pooled`` (a histogram ``(m, C)``), every stratum uses the event probabilities of
    ``pooled`` and its own censoring: the null hypothesis of a log-rank test.
    Reads only released counts: post-processing.
    """
    n_strata, n_bins, n_cols = counts.shape
    m = n_bins - 1
    out = np.zeros((n_draws, n_strata, n_bins, n_cols), dtype=np.float64)
    shared = _model(pooled)[1] if pooled is not None else None
    for g in range(n_strata):
        n0, p_event, p_cens = _model(counts[g])
        if shared is not None:
            p_event = shared
            p_cens = np.minimum(p_cens, 1.0 - p_event.sum(axis=1))
        left = np.full(n_draws, max(n0, 0), dtype=np.int64)
        for j in range(m):
            p_ev = np.clip(p_event[j], 0.0, 1.0)
            p_ev = p_ev / max(p_ev.sum(), 1.0)
            p_c = min(p_cens[j], 1.0 - p_ev.sum())
            probs = np.r_[max(p_c, 0.0), p_ev, 0.0]
            probs[-1] = max(1.0 - probs[:-1].sum(), 0.0)
            draws = rng.multinomial(left, probs / probs.sum())
            out[:, g, j, :] = draws[:, :-1]
            left = draws[:, -1]
        out[:, g, m, 0] = left
    if plan.noise_scale > 0.0:
        out += _laplace_ints(out.shape, plan.noise_scale, rng)
        out[:, :, m, 1:] = 0.0
    return out


def _laplace_ints(shape, scale, rng):
    """Discrete Laplace draws for the simulation (a difference of two geometric
    variables; floating point is fine here: it simulates the mechanism, it is not it)."""
    p = 1.0 - math.exp(-1.0 / scale)
    return (rng.geometric(p, size=shape) - rng.geometric(p, size=shape)).astype(np.float64)
