"""dp_logrank_test: a differentially private log-rank test whose p-value accounts for the
noise."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral
from types import SimpleNamespace

import numpy as np

from skdp.base import _shared_constraints
from skdp.survival._histogram import (
    HistogramPlan,
    at_risk,
    default_logrank_intervals,
    simulate_histograms,
)
from skdp.survival._release import check_no_dask_groups, grid_of, read_target, release
from skdp.utils._groups import check_max_rows_per_group, patient_codes
from skdp.utils._random import release_rng
from skdp.utils._rowsum import is_dask_collection
from skdp.utils._sklearn_compat import validate_params
from skdp.utils.validation import check_privacy_params

__all__ = ["DPLogrankResult", "dp_logrank_test"]


@dataclass(frozen=True)
class DPLogrankResult:
    """The result of :func:`dp_logrank_test`.

    Attributes
    ----------
    statistic : float
        The noise-aware log-rank chi-square statistic of the private histogram.
    p_value : float
        Its p-value under the null of equal hazards, from ``n_simulations`` draws of
        the statistic through the mechanism (Notes of :func:`dp_logrank_test`); at
        ``epsilon = inf`` the classical chi-square p-value.
    df : int
        Degrees of freedom, ``n_arms - 1``.
    observed, expected : ndarray of shape (n_arms,)
        The private numbers of events per arm and their expectations under the null.
    arms : tuple
        The public arm labels, in the order of ``observed``.
    epsilon_spent, delta_spent : float
        ``epsilon`` (``inf`` without privacy) and 0.
    privacy_guarantee : str
        ``"exact"``, or ``"none"`` at ``epsilon = inf``.
    privacy_breakdown : dict
        ``{"histogram": epsilon}``.
    privacy_unit : {"row", "group"}
    n_simulations : int
    """

    statistic: float
    p_value: float
    df: int
    observed: np.ndarray
    expected: np.ndarray
    arms: tuple
    epsilon_spent: float
    delta_spent: float
    privacy_guarantee: str
    privacy_breakdown: dict
    privacy_unit: str
    n_simulations: int


def logrank_statistic(counts, noise_variance):
    """``(T, observed, expected)`` of histograms ``(..., G, m + 1, 2)`` (noisy or exact;
    the last bin: followed past the horizon).

    ``U = O - E`` per arm with ``E_a = sum_j n_aj d_j / n_j``; its covariance is the
    hypergeometric (Mantel--Haenszel) one plus the noise's: each cell's noise ``z_bj``
    enters ``U_a`` with weight ``delta_ab - n_aj / n_j``, so the noise adds
    ``sigma^2 sum_j (I - w_j 1')(I - w_j 1')'``. ``T = U' V^- U`` over the first
    ``G - 1`` arms."""
    counts = np.asarray(counts, dtype=np.float64)
    n_arms = counts.shape[-3]
    n_risk = at_risk(counts)[..., :-1]  # (..., G, m)
    deaths = counts[..., :-1, 1]
    total_n, total_d = n_risk.sum(axis=-2), deaths.sum(axis=-2)  # (..., m)
    tn = total_n[..., None, :]
    w = np.where(tn > 0, n_risk / np.maximum(tn, 1e-300), 1.0 / n_arms)
    observed = deaths.sum(axis=-1)
    expected = (w * total_d[..., None, :]).sum(axis=-1)
    u = (observed - expected)[..., :-1]
    d = np.clip(total_d, 0.0, total_n)
    f = np.where(total_n > 1, d * (total_n - d) / np.maximum(total_n - 1.0, 1e-300), 0.0)
    eye = np.eye(n_arms)
    # hypergeometric: sum_j f_j w_aj (delta_ab - w_bj)
    cov = np.einsum("...j,...aj,ab->...ab", f, w, eye) - np.einsum(
        "...j,...aj,...bj->...ab", f, w, w
    )
    if noise_variance > 0.0:
        # (I - w 1')(I - w 1')' = I - w 1' - 1 w' + G w w', summed over j
        sw = w.sum(axis=-1)
        m = w.shape[-1]
        noise = (
            m * eye
            - sw[..., :, None]
            - sw[..., None, :]
            + n_arms * np.einsum("...aj,...bj->...ab", w, w)
        )
        cov = cov + noise_variance * noise
    sub = cov[..., :-1, :-1]
    if n_arms == 2:
        v = sub[..., 0, 0]
        stat = np.where(v > 0, u[..., 0] ** 2 / np.maximum(v, 1e-300), 0.0)
    else:
        stat = np.einsum("...a,...ab,...b->...", u, np.linalg.pinv(sub, hermitian=True), u)
    return np.maximum(stat, 0.0), observed, expected


#: the most null simulations (p-values resolved to 1e-5; the draws are held at once)
_MAX_SIMULATIONS = 100_000


@validate_params(_shared_constraints("random_state"), prefer_skip_nested_validation=True)
def dp_logrank_test(
    y,
    labels,
    *,
    epsilon,
    max_time,
    arms=(0, 1),
    time_grid=None,
    n_intervals=None,
    n_simulations=999,
    groups=None,
    max_rows_per_group=None,
    random_state=None,
):
    """Log-rank test of equal survival in two or more arms, with differential privacy.

    Parameters
    ----------
    y : structured array of shape (n_samples,)
        The survival target (event indicator, time):
        :func:`~skdp.survival.make_survival_target` or scikit-survival's ``Surv``.
    labels : array-like of shape (n_samples,)
        The arm of each row; every label must be one of ``arms``. Private, like ``y``.
    epsilon : float
        Total privacy loss of the test (one histogram). ``math.inf``: the exact grouped
        log-rank test with the classical chi-square p-value.
    max_time : float
        The public study horizon; later times are censored there.
    arms : sequence of hashable, default=(0, 1)
        The public arm labels (at least two; e.g. ``("control", "treatment")``). Never
        take them from the data: which labels occur is private.
    time_grid : array-like of float, default=None
        Public grid edges in ``(0, max_time]``.
    n_intervals : int, default=None
        With ``time_grid=None``: that many equal intervals. ``None``: a public rule of
        ``epsilon`` only, coarser than a curve's (the noise adds to the statistic's
        variance in proportion to the number of intervals): ``round(10 epsilon)``
        clipped to ``[4, 20]``.
    n_simulations : int, default=999
        Draws of the statistic under the null (the p-value's resolution is
        ``1 / (n_simulations + 1)``), at most 100,000.
    groups : array-like of shape (n_samples,), default=None
        The patient of each row; with it the guarantee is per patient (needs
        ``max_rows_per_group``). A patient whose rows lie in several arms is still
        counted at most ``max_rows_per_group`` times in all.
    max_rows_per_group : int, default=None
        The public number of rows a patient may contribute (rows beyond it are dropped
        at random).
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise and of the simulations; ``None`` (fresh OS entropy) for a
        real release.

    Returns
    -------
    DPLogrankResult

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row (one patient with all
    their rows with ``groups``). Mechanism: the histogram of (arm, interval, event or
    censored) on the public grid, with discrete Laplace noise of scale ``Delta /
    epsilon`` on every cell (:func:`skdp.mechanisms.add_geometric`). A row lies in one
    arm and one cell, so ``Delta = 1`` in L1 (``k`` with ``groups``): the arms'
    histograms are disjoint parts of one histogram (parallel composition), and the
    whole test spends ``epsilon``, exactly (pure DP). The statistic and its p-value
    read only the noisy histogram and public inputs: post-processing.

    **Statistic and p-value.** The grouped log-rank statistic with the noise's
    variance added to the hypergeometric one (:func:`logrank_statistic`). Its null
    distribution is simulated: cohorts are drawn with each arm's estimated size and
    censoring and the pooled estimated hazard, passed through the same mechanism (fresh
    noise of the same scale) and tested; ``p = (1 + #{T* >= T}) / (n_simulations +
    1)``. Treating the noisy statistic as chi-square would ignore the noise and reject
    too often; the simulation keeps the size at ``alpha`` (checked in skdp's tests).

    References
    ----------
    N. Mantel. "Evaluation of survival data and two new rank order statistics arising
    in its consideration." Cancer Chemotherapy Reports 50, 1966.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.survival import dp_logrank_test, make_survival_target
    >>> rng = np.random.default_rng(0)
    >>> arm = np.repeat([0, 1], 1000)
    >>> t = rng.exponential(np.where(arm == 1, 15.0, 10.0))
    >>> y = make_survival_target(t <= 20, np.minimum(t, 20))
    >>> res = dp_logrank_test(y, arm, epsilon=1.0, max_time=20.0, random_state=0)
    >>> bool(res.p_value < 0.01), res.epsilon_spent
    (True, 1.0)
    """
    epsilon, _ = check_privacy_params(epsilon)
    arms = _check_arms(arms)
    if isinstance(n_simulations, bool) or not isinstance(n_simulations, Integral):
        raise TypeError("n_simulations must be a whole number >= 1")
    if not 1 <= n_simulations <= _MAX_SIMULATIONS:  # a public limit on work and memory
        raise ValueError(f"n_simulations must be a whole number in [1, {_MAX_SIMULATIONS}]")
    if max_rows_per_group is not None:
        max_rows_per_group = check_max_rows_per_group(max_rows_per_group)
    edges = grid_of(max_time, time_grid, n_intervals, epsilon, default=default_logrank_intervals)
    owner = SimpleNamespace(max_rows_per_group=max_rows_per_group)
    dask_input = is_dask_collection(y) or is_dask_collection(labels)
    check_no_dask_groups(dask_input, groups)
    data = (y, labels) if dask_input else (*read_target(y), np.asarray(labels, dtype=object))
    if groups is not None:
        groups, _ = patient_codes(owner, groups, len(data[0]), dask_input=dask_input)
        data = (*data, groups)
    params = {
        "epsilon": epsilon, "max_time": max_time, "arms": list(arms),
        "time_grid": None if time_grid is None else list(np.ravel(time_grid)),
        "n_intervals": n_intervals, "n_simulations": int(n_simulations),
        "max_rows_per_group": max_rows_per_group,
    }  # fmt: skip
    rng = release_rng(
        random_state, tag="dp_logrank_test", params=params, data=data,
        order_invariant=groups is None,
    )  # fmt: skip
    groups_rng, noise_rng, sim_rng = rng.spawn(3)
    counts, plan = release(
        y, owner=owner, rngs={"groups": groups_rng, "noise": noise_rng}, edges=edges,
        plan_args={"epsilon": epsilon, "n_strata": len(arms), "n_columns": 2},
        groups=groups, labels=labels, arms=arms,
    )  # fmt: skip
    return _result(counts, plan, arms, int(n_simulations), sim_rng)


def _check_arms(arms):
    if isinstance(arms, (str, bytes)) or not hasattr(arms, "__len__"):
        raise TypeError("arms must be a sequence of at least two public arm labels")
    arms = tuple(arms)
    if len(arms) < 2 or len(set(arms)) != len(arms):
        raise ValueError("arms must hold at least two distinct public arm labels")
    return arms


def _result(counts, plan: HistogramPlan, arms, n_simulations, rng):
    var = plan.noise_variance
    stat, observed, expected = logrank_statistic(counts, var)
    stat = float(stat)
    df = len(arms) - 1
    if math.isinf(plan.epsilon):
        from scipy.stats import chi2

        p_value, n_sim = float(chi2.sf(stat, df)), 0
    else:
        pooled = counts.sum(axis=0).astype(np.float64)
        sims = simulate_histograms(
            counts.astype(np.float64), plan, rng, n_simulations, pooled=pooled
        )
        null = logrank_statistic(sims, var)[0]
        p_value = float((1 + np.count_nonzero(null >= stat)) / (n_simulations + 1))
        n_sim = n_simulations
    private = not math.isinf(plan.epsilon)
    return DPLogrankResult(
        statistic=stat, p_value=p_value, df=df,
        observed=observed, expected=expected, arms=arms,
        epsilon_spent=plan.epsilon, delta_spent=0.0,
        privacy_guarantee="exact" if private else "none",
        privacy_breakdown=plan.breakdown if private else {"nonprivate": math.inf},
        privacy_unit="row" if plan.max_rows_per_group is None else "group",
        n_simulations=n_sim,
    )  # fmt: skip
