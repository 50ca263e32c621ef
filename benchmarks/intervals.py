"""Coverage of the noise-aware confidence intervals of ``DPLinearRegression.conf_int``
(:doc:`/inference`) next to statsmodels' non-private OLS intervals in the same run.

Simulation: ``X ~ N(0, I_d)`` declared in ``(-4, 4)``, ``y = X beta + 0.1 + N(0, 1)``
declared in ``(-ylim, ylim)`` (``ylim = 6`` by default: almost nothing clipped;
``--ylim 2`` clips about 10 % of the targets), the last coefficient of ``beta`` is 0
(for the p-values' calibration). For each cell ``(n, epsilon, d)`` and repetition a new
data set and a new noise draw; the default mechanism (``DPLinearRegression`` with its
defaults and declared bounds).

Reported per cell: coverage of the nominal 95 % intervals (mean over the coefficients
and the intercept, and the smallest), mean width over the oracle width ``2 x 1.96 x``
the empirical standard deviation of the estimates (``coef_``) over the repetitions (the
largest ratio over the coefficients, their mean, and the largest ratio of the median
width), the same ratio against the standard deviation of the interval's centre (the
bias-corrected estimate; largest over the coefficients), the KS p-value of the zero
coefficient's p-values against the uniform distribution and the share of them below
0.05, statsmodels' coverage, and
the median time of ``summary`` (``conf_int``'s computation plus the p-values).
``--check-inf`` compares the intervals at ``epsilon=inf`` with statsmodels' (largest
difference of an endpoint over the interval's width).

``--simulator correlated`` draws the data sets from a second simulator (correlation 0.4
between every pair of features, other coefficients and intercept, Student-t noise with 5
degrees of freedom; :func:`simulate_correlated`), ``--seed0`` offsets the data sets'
seeds (fresh data sets for a check of a design chosen on the default ones).
Measured at 500 data sets per cell: :doc:`/inference`, "A second simulator per
estimator".

Run::

    python benchmarks/intervals.py --reps 200 --jobs 2            # the full grid
    python benchmarks/intervals.py --reps 20 --n 2000 --eps 1      # one quick cell
    python benchmarks/intervals.py --reps 200 --inference          # inference=True:
                                                                   # coef_ = the centre
    python benchmarks/intervals.py --reps 50 --regularization zhang   # another ridge
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _interval_grid import grid_parser, map_reps  # noqa: E402
from scipy import stats  # noqa: E402

BETAS = {2: [0.5, 0.0], 5: [0.5, -0.3, 0.2, 0.1, 0.0]}
INTERCEPT = 0.1


def simulate(n, d, rng):
    beta = np.asarray(BETAS[d])
    X = rng.standard_normal((n, d))
    y = X @ beta + INTERCEPT + rng.standard_normal(n)
    return X, y, np.append(beta, INTERCEPT)


#: ``--simulator correlated``: other coefficients (the last 0) and intercept, correlated
#: features, heavier-tailed noise
BETAS_CORRELATED = {2: [-0.4, 0.0], 5: [0.3, 0.3, -0.2, 0.15, 0.0]}
INTERCEPT_CORRELATED, CORRELATION, NOISE_DF = -0.2, 0.4, 5


def simulate_correlated(n, d, rng):
    """The second simulator: ``X ~ N(0, C)`` (correlation 0.4 between every pair),
    ``y = X beta - 0.2 + e`` with ``e`` Student-t with 5 degrees of freedom scaled to
    variance 1."""
    beta = np.asarray(BETAS_CORRELATED[d])
    C = CORRELATION * np.ones((d, d)) + (1.0 - CORRELATION) * np.eye(d)
    X = rng.standard_normal((n, d)) @ np.linalg.cholesky(C).T
    noise = rng.standard_t(NOISE_DF, n) * np.sqrt((NOISE_DF - 2) / NOISE_DF)
    y = X @ beta + INTERCEPT_CORRELATED + noise
    return X, y, np.append(beta, INTERCEPT_CORRELATED)


SIMULATORS = {"independent": simulate, "correlated": simulate_correlated}


def one_rep(args):
    """One repetition of one cell: ``(estimate, lower, upper, p, sm_lower, sm_upper,
    seconds)``."""
    import statsmodels.api as sm

    from skdp.linear_model import DPLinearRegression

    n, eps, d, ylim, seed, alpha, options, simulator = args
    rng = np.random.default_rng(seed)
    X, y, _ = SIMULATORS[simulator](n, d, rng)
    reg = DPLinearRegression(
        epsilon=eps, bounds_X=(-4.0, 4.0), bounds_y=(-ylim, ylim), random_state=seed, **options
    ).fit(X, y)
    t0 = time.perf_counter()
    table = reg.summary(alpha)  # the same computation as conf_int, plus the p-values
    seconds = time.perf_counter() - t0
    ci = table.iloc[:, 2:4].to_numpy()
    est = np.append(reg.coef_, reg.intercept_)
    ols = sm.OLS(y, sm.add_constant(X)).fit()
    sm_ci = np.asarray(ols.conf_int(alpha))
    sm_ci = np.vstack([sm_ci[1:], sm_ci[:1]])  # coefficients, then the intercept
    return est, ci[:, 0], ci[:, 1], table["P>|z|"].to_numpy(), sm_ci[:, 0], sm_ci[:, 1], seconds


def cell(n, eps, d, reps, ylim, jobs, alpha=0.05, seed0=0, options=None, simulator=None):
    options = {} if options is None else options
    simulator = simulator or "independent"
    args = [(n, eps, d, ylim, seed0 + 1000 * r + 7, alpha, options, simulator) for r in range(reps)]
    out = map_reps(one_rep, args, jobs)
    est, lo, hi, pv, slo, shi, sec = (np.array(v) for v in zip(*out, strict=True))
    truth = SIMULATORS[simulator](1, d, np.random.default_rng(0))[2]
    cover = ((lo <= truth) & (truth <= hi)).mean(axis=0)
    sm_cover = ((slo <= truth) & (truth <= shi)).mean(axis=0)
    oracle = 2 * stats.norm.ppf(1 - alpha / 2) * est.std(axis=0, ddof=1)
    ratio = (hi - lo).mean(axis=0) / oracle
    median_ratio = np.median(hi - lo, axis=0) / oracle
    centre_oracle = 2 * stats.norm.ppf(1 - alpha / 2) * ((lo + hi) / 2).std(axis=0, ddof=1)
    zero = pv[:, d - 1]  # the zero coefficient
    return {
        "n": n,
        "eps": eps,
        "d": d,
        "cover": cover.mean(),
        "cover_min": cover.min(),
        "width_ratio_max": ratio.max(),
        "width_ratio_mean": ratio.mean(),
        "width_median_ratio_max": median_ratio.max(),
        "width_centre_ratio_max": ((hi - lo).mean(axis=0) / centre_oracle).max(),
        "ks_p": stats.kstest(zero, "uniform").pvalue,
        "reject5": (zero < 0.05).mean(),
        "sm_cover": sm_cover.mean(),
        "sec": float(np.median(sec)),
    }


def check_inf(n=2000, d=5, seeds=5):
    """Largest ``|endpoint - statsmodels'| / statsmodels' width`` at ``epsilon=inf``."""
    import statsmodels.api as sm

    from skdp.linear_model import DPLinearRegression

    worst = 0.0
    for seed in range(seeds):
        X, y, _ = simulate(n, d, np.random.default_rng(seed))
        reg = DPLinearRegression(epsilon=np.inf, bounds_X=(-6, 6), bounds_y=(-12, 12)).fit(X, y)
        ci = reg.conf_int()
        s = np.asarray(sm.OLS(y, sm.add_constant(X)).fit().conf_int())
        s = np.vstack([s[1:], s[:1]])
        width = (s[:, 1] - s[:, 0])[:, None]
        worst = max(worst, float(np.max(np.abs(ci - s) / width)))
    return worst


def main():
    ap = grid_parser(__doc__)
    ap.add_argument("--ylim", type=float, default=6.0)
    ap.add_argument("--inference", action="store_true", help="fit with inference=True")
    ap.add_argument("--regularization", default=None, help="'zhang' or a number")
    ap.add_argument("--simulator", choices=sorted(SIMULATORS), default="independent")
    ap.add_argument("--seed0", type=int, default=0, help="offset of the data sets' seeds")
    a = ap.parse_args()
    options = {"inference": True} if a.inference else {}
    if a.regularization is not None:
        r = a.regularization
        options["regularization"] = r if r in ("adaptive", "zhang") else float(r)
    print(f"load average at start: {os.getloadavg()}; reps per cell: {a.reps}; ylim {a.ylim}")
    print(f"DPLinearRegression options: {options or 'defaults'}; simulator: {a.simulator}")
    if a.check_inf:
        print(f"epsilon=inf: largest endpoint difference / width vs statsmodels: {check_inf():.2e}")
    head = (
        "    n   eps  d  cover  min    width/oracle (max, mean, max of median)"
        "  /sd(centre)  KS-p   rej5%  sm-cover  summary s"
    )
    print(head)
    for d in a.d:
        for n in a.n:
            for eps in a.eps:
                r = cell(
                    n,
                    eps,
                    d,
                    a.reps,
                    a.ylim,
                    a.jobs,
                    seed0=a.seed0,
                    options=options,
                    simulator=a.simulator,
                )
                print(
                    f"{r['n']:>5} {r['eps']:>5} {r['d']:>2}  {r['cover']:.3f} {r['cover_min']:.3f}"
                    f"  {r['width_ratio_max']:>6.2f} {r['width_ratio_mean']:>6.2f}"
                    f" {r['width_median_ratio_max']:>6.2f}"
                    f"       {r['width_centre_ratio_max']:>6.2f}"
                    f"       {r['ks_p']:.3f}  {r['reject5']:.3f}  {r['sm_cover']:.3f}"
                    f"     {r['sec']:.3f}",
                    flush=True,
                )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
