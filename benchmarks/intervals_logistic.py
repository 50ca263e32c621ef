"""Coverage of ``DPLogisticRegression(inference=True).conf_int`` (:doc:`/inference`)
next to statsmodels' non-private ``Logit`` intervals in the same run.

Simulation: ``X ~ U(-1, 1)^d`` declared in ``(-1, 1)``, ``P(y = 1) = sigmoid(X beta +
0.2)``; the last coefficient of ``beta`` is 0 (for the p-values' calibration). For each
cell ``(n, epsilon, d)`` and repetition a new data set and a new noise draw;
objective perturbation with ``inference=True`` (35 % of epsilon to the Fisher
information, 50 % where ``n epsilon / d' < 40``) and otherwise the defaults.

Reported per cell: coverage of the nominal 95 % intervals (mean over the coefficients
and the intercept, and the smallest), mean width over two oracle widths ``2 x 1.96 x``
the empirical standard deviation over the repetitions of (a) the interval's midpoint
(the debiased estimate, moved by the bootstrap's bias correction and the calibrated
levels) and (b) the released ``coef_`` (shrunk by the ridge; the largest ratio over the
coefficients), the KS p-value of the zero coefficient's p-values against
the uniform and the share below 0.05, statsmodels' coverage and mean width over the
oracle (a), and the median time of ``summary``. ``--check-inf`` compares the intervals
at ``epsilon=inf`` with statsmodels' (largest endpoint difference over the width).

``--simulator correlated`` draws the data sets from a second simulator (Gaussian
features with correlation 0.4, halved and clipped to the bounds; other coefficients; about
a third of the labels positive; :func:`simulate_correlated`), ``--seed0`` offsets the
seeds. Measured at 500 data sets per cell: :doc:`/inference`, "A second simulator per
estimator".

Run::

    python benchmarks/intervals_logistic.py --reps 200 --jobs 2     # the full grid
    python benchmarks/intervals_logistic.py --reps 20 --n 2000 --eps 1 --d 2
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _interval_grid import grid_parser, map_reps  # noqa: E402
from scipy import stats  # noqa: E402

COEFS = {2: [1.0, 0.0], 5: [1.0, -0.5, 0.5, 0.25, 0.0]}
ICPT = 0.2


def simulate_logistic(n, d, rng):
    beta = np.asarray(COEFS[d])
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(X @ beta + ICPT)))).astype(int)
    return X, y


#: ``--simulator correlated``: other coefficients (the last 0), an intercept that makes
#: about a third of the labels positive, correlated features
COEFS_CORRELATED = {2: [-1.5, 0.0], 5: [0.8, 0.8, -0.6, 0.4, 0.0]}
ICPT_CORRELATED, CORRELATION = -0.8, 0.4


def simulate_correlated(n, d, rng):
    """The second simulator: ``X = clip(N(0, C) / 2, -1, 1)`` (correlation 0.4 between
    every pair), ``P(y = 1) = sigmoid(X beta - 0.8)``."""
    beta = np.asarray(COEFS_CORRELATED[d])
    C = CORRELATION * np.ones((d, d)) + (1.0 - CORRELATION) * np.eye(d)
    X = np.clip(0.5 * rng.standard_normal((n, d)) @ np.linalg.cholesky(C).T, -1.0, 1.0)
    p = 1.0 / (1.0 + np.exp(-(X @ beta + ICPT_CORRELATED)))
    return X, (rng.uniform(size=n) < p).astype(int)


SIMULATORS = {"uniform": simulate_logistic, "correlated": simulate_correlated}
TRUTHS = {
    "uniform": lambda d: np.append(COEFS[d], ICPT),
    "correlated": lambda d: np.append(COEFS_CORRELATED[d], ICPT_CORRELATED),
}


def rep_logistic(args):
    """``(estimate, lower, upper, p, sm_lower, sm_upper, seconds)`` of one repetition."""
    import statsmodels.api as sm

    from skdp.linear_model import DPLogisticRegression

    n, eps, d, seed, alpha, simulator = args
    X, y = SIMULATORS[simulator](n, d, np.random.default_rng(seed))
    clf = DPLogisticRegression(
        epsilon=eps, classes=[0, 1], bounds_X=(-1.0, 1.0), inference=True, random_state=seed
    ).fit(X, y)
    t0 = time.perf_counter()
    table = clf.summary(alpha)
    seconds = time.perf_counter() - t0
    ci = table.iloc[:, 2:4].to_numpy()
    est = np.append(clf.coef_[0], clf.intercept_)
    sm_ci = np.asarray(sm.Logit(y, sm.add_constant(X, prepend=False)).fit(disp=0).conf_int(alpha))
    return est, ci[:, 0], ci[:, 1], table["P>|z|"].to_numpy(), sm_ci[:, 0], sm_ci[:, 1], seconds


def run_cell(n, eps, d, reps, jobs, alpha=0.05, simulator="uniform", seed0=0):
    args = [(n, eps, d, seed0 + 7919 * r + 11, alpha, simulator) for r in range(reps)]
    out = map_reps(rep_logistic, args, jobs)
    est, lo, hi, pv, slo, shi, sec = (np.array(v) for v in zip(*out, strict=True))
    truth = TRUTHS[simulator](d)
    z2 = 2 * stats.norm.ppf(1 - alpha / 2)
    oracle_mid = z2 * ((lo + hi) / 2).std(axis=0, ddof=1)
    oracle_coef = z2 * est.std(axis=0, ddof=1)
    width = (hi - lo).mean(axis=0)
    zero = pv[:, d - 1]
    return {
        "cover": ((lo <= truth) & (truth <= hi)).mean(axis=0),
        "ratio_mid": (width / oracle_mid).max(),
        "ratio_coef": (width / oracle_coef).max(),
        "ks_p": stats.kstest(zero, "uniform").pvalue,
        "reject5": (zero < 0.05).mean(),
        "sm_cover": ((slo <= truth) & (truth <= shi)).mean(),
        "sm_ratio": ((shi - slo).mean(axis=0) / oracle_mid).max(),
        "sec": float(np.median(sec)),
    }


def check_inf_logistic(n=2000, d=5, seeds=5):
    """Largest ``|endpoint - statsmodels'| / statsmodels' width`` at ``epsilon=inf``."""
    import statsmodels.api as sm

    from skdp.linear_model import DPLogisticRegression

    worst = 0.0
    for seed in range(seeds):
        X, y = simulate_logistic(n, d, np.random.default_rng(seed))
        clf = DPLogisticRegression(
            epsilon=np.inf, classes=[0, 1], bounds_X=(-1, 1), inference=True
        ).fit(X, y)
        s = np.asarray(sm.Logit(y, sm.add_constant(X, prepend=False)).fit(disp=0).conf_int())
        width = (s[:, 1] - s[:, 0])[:, None]
        worst = max(worst, float(np.max(np.abs(clf.conf_int() - s) / width)))
    return worst


def main():
    ap = grid_parser(__doc__)
    ap.add_argument("--simulator", choices=sorted(SIMULATORS), default="uniform")
    ap.add_argument("--seed0", type=int, default=0, help="offset of the data sets' seeds")
    a = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}; reps per cell: {a.reps}")
    print(f"simulator: {a.simulator}; seed0: {a.seed0}")
    if a.check_inf:
        print(f"epsilon=inf: largest endpoint difference / width: {check_inf_logistic():.2e}")
    print("    n   eps  d  cover  min   w/oracle(mid) w/oracle(coef)  KS-p  rej5  sm-cov sm-w  s")
    for d in a.d:
        for n in a.n:
            for eps in a.eps:
                r = run_cell(n, eps, d, a.reps, a.jobs, simulator=a.simulator, seed0=a.seed0)
                print(
                    f"{n:>5} {eps:>5} {d:>2}  {r['cover'].mean():.3f} {r['cover'].min():.3f}"
                    f"  {r['ratio_mid']:>10.2f} {r['ratio_coef']:>12.2f}"
                    f"     {r['ks_p']:.3f} {r['reject5']:.3f} {r['sm_cover']:.3f}"
                    f"  {r['sm_ratio']:.2f}  {r['sec']:.3f}",
                    flush=True,
                )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
