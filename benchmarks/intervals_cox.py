"""Coverage of the noise-aware confidence intervals of ``DPCoxPH.conf_int``
(:doc:`/inference`) next to lifelines' non-private ``CoxPHFitter`` intervals in the same
run.

Simulation with known hazard ratios: ``X ~ N(0, I_d)`` clipped to and declared in
``(-3, 3)``, a constant baseline hazard ``0.1`` times ``exp(X beta)`` (so the
piecewise-exponential model of ``DPCoxPH`` is exactly right and ``beta`` is its target),
uniform censoring on ``(0, 15)`` and the horizon ``max_time = 10`` (about 45 % events);
the last coefficient of ``beta`` is 0 (for the p-values' calibration). Each cell ``(n,
epsilon, d)`` and repetition draws a new cohort and a new noise; ``DPCoxPH`` has its
defaults (10 intervals, 8 Newton steps).

Reported per cell: coverage of the nominal 95 % intervals (mean over the coefficients
and the smallest), mean width over the oracle width ``2 x 1.96 x`` the empirical
standard deviation of the estimates (``coef_``) over the repetitions (largest and mean
over the coefficients), the bias of ``coef_`` relative to the largest true coefficient,
the KS p-value of the zero coefficient's p-values against the uniform distribution and
the share below 0.05 and the median time of ``summary``; ``--lifelines k``: lifelines'
coverage on the cohorts of the first ``k`` repetitions (the same cohorts at every
epsilon; lifelines takes seconds per fit at n = 10,000). ``--check-inf`` compares the
intervals at ``epsilon=inf`` with the Wald
intervals of the same piecewise-exponential model fitted as a Poisson GLM by
statsmodels (an independent implementation), and reports lifelines' Cox intervals
next to them (a different model: Cox's partial likelihood).

Reported also: the mean width over ``2 x 1.96 x`` the standard deviation of the
interval's midpoint ("mid"; below a released ``n epsilon`` of 5,000 the interval mixes
draws of the curvature and its midpoint is not ``coef_``).

Measured (200 repetitions per cell, two cores shared with other jobs; the tables and
the targets in :doc:`/inference`). ``--inference`` (``DPCoxPH(inference=True)``:
``coef_`` released at the interval's centre), with the curvature's draws up to a
released ``n epsilon`` of 50,000 and their eigenvalue floor rising with it (0.2 to 0.5
noise standard deviations): coverage 0.942-0.985 (worst coefficient 0.920-0.985), width
over the ``coef_`` oracle 1.04-1.24 in 16 cells, 1.31 and 1.39 at ``n = 10000,
epsilon = 0.3`` (conservative there: 0.970-0.985; the benchmark's own noise draws gave
1.22-1.36 on the six formerly wide cells, 1.31 at ``n = 500, epsilon = 1, d = 5``);
null p-values uniform in 10 cells,
conservative in 8 (KS p 0.000-0.048); summary 0.6-0.7 s at n = 10,000 (load 3). Before
(the floor a constant 0.25 and the one-estimate interval from ``n epsilon = 5,000``):
width 1.38-1.49 in six cells, worst coefficient 0.900 and 0.915 at ``n = 10000,
d = 5``. ``--hessian-fraction 0.5`` or ``--step-size 1`` widened the intervals (50
repetitions). epsilon=inf: 1.01e-9 of the width from the Poisson-GLM Wald interval,
0.004 from lifelines'. Structured draws of the curvature from ``n epsilon = 1,000`` on
(cross block around 0 with half the noise; not kept, :doc:`/inference`): width 1.07 and
1.25 at ``n = 10000, epsilon = 0.3`` (this script, 200 repetitions, worst coefficient
0.945 / 0.915; load 7-11), 0.94-1.28 over the twelve cells from ``n epsilon`` 1,000 on,
but the worst coefficient 0.910-0.915 in four. Kept since: those structured draws
with a share of the first-order shrinkage correction falling with ``n epsilon`` (1 up to
1,500, at least 0.5 from 3,000 on): on one set of 200 cohorts per cell the width 1.02-1.27
in all 18 cells, the worst coefficient 0.920-0.985 in 17 and 0.880 at ``n = 10000,
epsilon = 3, d = 5`` (0.880 before too; the non-private Wald interval covers that
coefficient 0.915 on these cohorts; this script with ``--inference``: 0.910, width 1.04).
At 1,000 cohorts per cell (``--reps 1000 --inference``) the worst coefficient covers
0.930-0.977 and the width is 0.99-1.24 in all 18 cells; that cell at 2,000 cohorts: 0.925
(default), 0.934 (``--inference``), 0.942 at ``--eps inf`` (Monte Carlo noise at 200).
Since: the curvature's spectrum shrunk by moment matching (the fixed point spread it)
and, from a released ``n epsilon`` of 1,800 on, ``P>|z|`` from the path's covariance at
one estimate of the curvature. ``--reps 1000 --inference`` (load 0.8-2): worst
coefficient 0.933-0.977, width 1.00-1.24, null p-values uniform in 11 of 18 cells (7
before; all ten from ``n epsilon`` 2,000 on, KS p 0.070-0.968), not in the six below
1,000 (conservative, unchanged) nor at ``n = 500, epsilon = 3, d = 2`` (KS p 0.030).

``--simulator weibull`` draws the cohorts from a second simulator (correlation 0.4
between every pair of features, a Weibull baseline of shape 1.5, other coefficients, about
35 % events; :func:`simulate_weibull`), ``--seed0`` offsets the cohorts' seeds.
Measured at 500 data sets per cell: :doc:`/inference`, "A second simulator per
estimator".

Run::

    python benchmarks/intervals_cox.py --reps 200 --jobs 2 --lifelines 30  # the full grid
    python benchmarks/intervals_cox.py --reps 20 --n 2000 --eps 1         # one quick cell
    python benchmarks/intervals_cox.py --check-inf --reps 0
"""

from __future__ import annotations

import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _interval_grid import grid_parser, map_reps  # noqa: E402
from scipy import stats  # noqa: E402

BETAS = {2: [0.5, 0.0], 5: [0.5, -0.3, 0.2, 0.1, 0.0]}
BOUND, RATE, CENSOR, HORIZON = 3.0, 0.1, 15.0, 10.0


def simulate(n, d, rng):
    """``(X, event, time, beta)`` of one cohort."""
    beta = np.asarray(BETAS[d], float)
    X = np.clip(rng.standard_normal((n, d)), -BOUND, BOUND)
    t = rng.exponential(1.0 / (RATE * np.exp(X @ beta)))
    c = rng.uniform(0.0, CENSOR, n)
    event = (t <= c) & (t <= HORIZON)
    return X, event, np.minimum(np.minimum(t, c), HORIZON), beta


#: ``--simulator weibull``: other coefficients (the last 0), correlated features, a
#: Weibull baseline (the piecewise-exponential model only approximately right)
BETAS_WEIBULL = {2: [-0.4, 0.0], 5: [0.3, 0.3, -0.2, 0.15, 0.0]}
CORRELATION, SHAPE, SCALE = 0.4, 1.5, 12.0


def simulate_weibull(n, d, rng):
    """``(X, event, time, beta)`` of one cohort of the second simulator: ``X ~ N(0, C)``
    (correlation 0.4) clipped to ``(-3, 3)``, a Weibull baseline of shape 1.5 and scale
    12 times ``exp(X beta)``, the same censoring and horizon (about 35 % events)."""
    beta = np.asarray(BETAS_WEIBULL[d], float)
    C = CORRELATION * np.ones((d, d)) + (1.0 - CORRELATION) * np.eye(d)
    X = np.clip(rng.standard_normal((n, d)) @ np.linalg.cholesky(C).T, -BOUND, BOUND)
    t = SCALE * (rng.exponential(size=n) / np.exp(X @ beta)) ** (1.0 / SHAPE)
    c = rng.uniform(0.0, CENSOR, n)
    event = (t <= c) & (t <= HORIZON)
    return X, event, np.minimum(np.minimum(t, c), HORIZON), beta


SIMULATORS = {"exponential": simulate, "weibull": simulate_weibull}
#: the true coefficients of each simulator, per ``d``
TRUTHS = {"exponential": BETAS, "weibull": BETAS_WEIBULL}


def lifelines_ci(X, event, time_, alpha):
    """lifelines' ``CoxPHFitter`` intervals (Efron ties), rows in the order of ``X``."""
    import pandas as pd
    from lifelines import CoxPHFitter

    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["T"], frame["E"] = time_, event.astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = CoxPHFitter(alpha=alpha).fit(frame, "T", "E")
    return fit.confidence_intervals_.to_numpy()


def _seed(r, seed0=0):
    return seed0 + 1000 * r + 11


def one_rep(args):
    """One repetition of one cell: ``(estimate, lower, upper, p, seconds)``."""
    from skdp.survival import DPCoxPH, make_survival_target

    n, eps, d, seed, alpha, options = args
    rng = np.random.default_rng(seed)
    options = dict(options)
    X, event, time_, _ = SIMULATORS[options.pop("simulator", "exponential")](n, d, rng)
    y = make_survival_target(event, time_)
    cox = DPCoxPH(
        epsilon=eps, bounds_X=(-BOUND, BOUND), max_time=HORIZON, random_state=seed, **options
    )
    cox.fit(X, y)
    t0 = time.perf_counter()
    table = cox.summary(alpha)  # the same computation as conf_int, plus the p-values
    seconds = time.perf_counter() - t0
    ci = table.iloc[:, 2:4].to_numpy()
    return cox.coef_, ci[:, 0], ci[:, 1], table["P>|z|"].to_numpy(), seconds


def one_lifelines(args):
    """lifelines' interval on the cohort of one repetition (the same cohort at every
    epsilon)."""
    n, d, seed, alpha, simulator = args
    X, event, time_, _ = SIMULATORS[simulator](n, d, np.random.default_rng(seed))
    return lifelines_ci(X, event, time_, alpha)


def lifelines_cover(n, d, reps, jobs, alpha=0.05, simulator="exponential", seed0=0):
    """lifelines' coverage over the cohorts of the first ``reps`` repetitions."""
    args = [(n, d, _seed(r, seed0), alpha, simulator) for r in range(reps)]
    out = np.array(map_reps(one_lifelines, args, jobs))
    truth = np.asarray(TRUTHS[simulator][d], float)
    return float(((out[:, :, 0] <= truth) & (truth <= out[:, :, 1])).mean())


def cell(n, eps, d, reps, jobs, alpha=0.05, options=None, seed0=0):
    options = dict(options or {})
    args = [(n, eps, d, _seed(r, seed0), alpha, options) for r in range(reps)]
    out = map_reps(one_rep, args, jobs)
    est, lo, hi, pv, sec = (np.array(v) for v in zip(*out, strict=True))
    truth = np.asarray(TRUTHS[options.get("simulator", "exponential")][d], float)
    cover = ((lo <= truth) & (truth <= hi)).mean(axis=0)
    oracle = 2 * stats.norm.ppf(1 - alpha / 2) * est.std(axis=0, ddof=1)
    ratio = (hi - lo).mean(axis=0) / oracle
    z2 = 2 * stats.norm.ppf(1 - alpha / 2)  # the interval's midpoint: the oracle of its centre
    ratio_mid = (hi - lo).mean(axis=0) / (z2 * ((lo + hi) / 2).std(axis=0, ddof=1))
    zero = pv[:, d - 1]  # the zero coefficient
    return {
        "n": n,
        "eps": eps,
        "d": d,
        "cover": cover.mean(),
        "cover_min": cover.min(),
        "width_ratio_max": ratio.max(),
        "width_ratio_mean": ratio.mean(),
        "width_ratio_mid": ratio_mid.max(),
        "rel_bias": float(np.max(np.abs(est.mean(axis=0) - truth)) / np.max(np.abs(truth))),
        "ks_p": stats.kstest(zero, "uniform").pvalue,
        "reject5": (zero < 0.05).mean(),
        "sec": float(np.median(sec)),
    }


def pe_glm_wald(X, event, time_, edges, alpha):
    """Wald intervals of the piecewise-exponential model fitted as a Poisson GLM (one
    row per patient and interval at risk, ``log(exposure)`` offset) by statsmodels."""
    import statsmodels.api as sm

    J = edges.size - 1
    lo, hi = edges[:-1], edges[1:]
    expo = np.clip(np.minimum(time_[:, None], hi) - lo, 0.0, None)
    at_risk = expo > 0
    last = np.clip(np.searchsorted(edges, time_, side="left") - 1, 0, J - 1)
    dev = np.zeros_like(expo)
    dev[np.arange(len(time_)), last] = event
    rows, cols = np.nonzero(at_risk)
    design = np.hstack([np.eye(J)[cols], X[rows]])
    fit = sm.GLM(
        dev[rows, cols], design, family=sm.families.Poisson(), offset=np.log(expo[rows, cols])
    ).fit()
    return np.asarray(fit.conf_int(alpha))[J:]


def check_inf(n=2000, d=5, seeds=3, alpha=0.05):
    """Largest ``|endpoint - reference| / reference width`` at ``epsilon=inf`` against
    the statsmodels Poisson-GLM Wald interval, and the same against lifelines."""
    from skdp.survival import DPCoxPH, make_survival_target

    worst_pe, worst_ll, width_ll = 0.0, 0.0, []
    for seed in range(seeds):
        X, event, time_, _ = simulate(n, d, np.random.default_rng(seed))
        cox = DPCoxPH(epsilon=np.inf, bounds_X=(-BOUND, BOUND), max_time=HORIZON)
        ci = cox.fit(X, make_survival_target(event, time_)).conf_int(alpha)
        ref = pe_glm_wald(X, event, time_, cox.time_grid_, alpha)
        ll = lifelines_ci(X, event, time_, alpha)
        worst_pe = max(worst_pe, float(np.max(np.abs(ci - ref) / (ref[:, 1:] - ref[:, :1]))))
        worst_ll = max(worst_ll, float(np.max(np.abs(ci - ll) / (ll[:, 1:] - ll[:, :1]))))
        width_ll.append(np.mean((ci[:, 1] - ci[:, 0]) / (ll[:, 1] - ll[:, 0])))
    return worst_pe, worst_ll, float(np.mean(width_ll))


def main():
    ap = grid_parser(__doc__)
    ap.add_argument(
        "--lifelines", type=int, default=0, help="lifelines' coverage on this many cohorts"
    )
    ap.add_argument(
        "--inference", action="store_true", help="DPCoxPH(inference=True): coef_ at the centre"
    )
    ap.add_argument(
        "--simulator", choices=sorted(SIMULATORS), default="exponential", help="the cohorts"
    )
    ap.add_argument("--seed0", type=int, default=0, help="offset of the cohorts' seeds")
    ap.add_argument("--hessian-fraction", type=float, default=None)
    ap.add_argument("--step-size", type=float, default=None)
    a = ap.parse_args()
    options = {"inference": True} if a.inference else {}
    if a.hessian_fraction is not None:
        options["hessian_fraction"] = a.hessian_fraction
    if a.step_size is not None:
        options["step_size"] = a.step_size
    print(f"load average at start: {os.getloadavg()}; reps per cell: {a.reps}; {options}")
    print(f"simulator: {a.simulator}; seed0: {a.seed0}")
    if a.check_inf:
        pe, ll, w = check_inf()
        print(
            f"epsilon=inf: largest endpoint difference / width vs the Poisson-GLM Wald "
            f"interval {pe:.2e}; vs lifelines' Cox interval {ll:.3f} (width ratio {w:.3f})"
        )
    if a.reps <= 0:
        return
    print(
        "    n   eps  d  cover  min   width/oracle (max, mean, mid)  bias/max|b|"
        "  KS-p   rej5%  summary s"
    )
    for d in a.d:
        for n in a.n:
            for eps in a.eps:
                sim = {"simulator": a.simulator} if a.simulator != "exponential" else {}
                r = cell(n, eps, d, a.reps, a.jobs, options={**options, **sim}, seed0=a.seed0)
                print(
                    f"{r['n']:>5} {r['eps']:>5} {r['d']:>2}  {r['cover']:.3f} {r['cover_min']:.3f}"
                    f"  {r['width_ratio_max']:>6.2f} {r['width_ratio_mean']:>6.2f}"
                    f" {r['width_ratio_mid']:>6.2f}"
                    f"             {r['rel_bias']:>6.3f}"
                    f"  {r['ks_p']:.3f}  {r['reject5']:.3f}     {r['sec']:.4f}",
                    flush=True,
                )
            if a.lifelines:
                k = min(a.lifelines, a.reps)
                cover = lifelines_cover(n, d, k, a.jobs, simulator=a.simulator, seed0=a.seed0)
                print(
                    f"{n:>5}   inf {d:>2}  lifelines' coverage {cover:.3f} "
                    f"({min(a.lifelines, a.reps)} cohorts)",
                    flush=True,
                )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
