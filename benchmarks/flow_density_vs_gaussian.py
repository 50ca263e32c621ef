"""DPFlowDensity against Gaussian baselines: held-out log-likelihood per row (original units).

Every row of the table is fitted on the same training rows and scored on the same held-out
rows, in one run:

* ``full Gaussian`` and ``diagonal Gaussian``: maximum likelihood, **non-private**;
* ``GaussianMixture``: scikit-learn, full covariances, **non-private**, the number of
  components (1, 2, 4 or 8) chosen by BIC on the training rows;
* ``DP Gaussian``: noisy mean and covariance (rows scaled onto ``[-1, 1]^d`` by the
  declared bounds, so ``||x|| <= sqrt(d)``; Gaussian mechanism on ``sum x`` at L2
  sensitivity ``sqrt(d)`` and on the upper triangle of ``sum x x^T`` at ``d``, each at
  ``(epsilon / 2, delta / 2)``; eigenvalues floored; ``n`` public);
* ``DP Gaussian copula``: ``DPFlowDensity(n_layers=0)`` (noisy marginal histograms,
  Gaussianised, noisy correlation; no DP-SGD);
* ``DPFlowDensity``: the defaults (copula base, then a MAF trained with DP-SGD);
* ``DPFlowDensity paper``: the seed paper's setting (``base="none"``: DP-SGD only).

Tables (no download; bounds are public: from the simulator's definition, or the full
public table widened by 5 %; every private row respects its epsilon in total, bounds
declared):

* ``nonlinear``: :func:`skdp.datasets.make_nonlinear_repeated_measures` (9 columns);
* ``banana``: ``x1 ~ N(0, 1)``, ``x2 = x1^2 + N(0, 0.3^2)``, ``x3 = sin(2 x1) + N(0, 0.2^2)``,
  ``x4 ~ lognormal(0, 0.5)``: a strong nonlinear relation between columns;
* ``randhie``: statsmodels' RAND health insurance experiment (20,190 rows), columns
  ``mdvis, lpi, fmde, disea``, dequantised with public uniform jitter (width 1 for the
  counts, 0.1 for the others) so that every model is a density;
* ``diabetes``: scikit-learn's diabetes (442 rows, the 9 numeric columns; small ``n``).

Usage::

    nice -n 10 env OMP_NUM_THREADS=1 python benchmarks/flow_density_vs_gaussian.py --quick
    nice -n 10 env OMP_NUM_THREADS=1 python benchmarks/flow_density_vs_gaussian.py --seeds 3
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np

TABLES = ("nonlinear", "banana", "randhie", "diabetes")


# ------------------------------------------------------------------------- tables
def _nonlinear(n, rng):
    from skdp.datasets import make_nonlinear_repeated_measures

    X = make_nonlinear_repeated_measures(n, random_state=rng)
    bounds = [(0.0, 1.0), (0.0, 3.0), (0.0, 0.5), (0.0, 2.0)] + [(-1.0, 7.0)] * 5
    return X, bounds


def _banana(n, rng):
    x1 = rng.standard_normal(n)
    x2 = x1**2 + 0.3 * rng.standard_normal(n)
    x3 = np.sin(2 * x1) + 0.2 * rng.standard_normal(n)
    x4 = np.exp(0.5 * rng.standard_normal(n))
    X = np.column_stack([x1, x2, x3, x4])
    return X, [(-4.5, 4.5), (-1.5, 16.0), (-2.0, 2.0), (0.0, 8.0)]


def _public_bounds(X):
    lo, hi = X.min(0), X.max(0)
    pad = 0.05 * (hi - lo)
    return [(float(a), float(b)) for a, b in zip(lo - pad, hi + pad, strict=True)]


def _randhie(rng):
    import statsmodels.api as sm

    d = sm.datasets.randhie.load_pandas().data
    X = d[["mdvis", "lpi", "fmde", "disea"]].to_numpy(float)
    X = X + (rng.random(X.shape) - 0.5) * np.array([1.0, 0.1, 0.1, 1.0])
    return X, _public_bounds(X)


def _diabetes(rng):
    from sklearn.datasets import load_diabetes

    X = np.delete(load_diabetes().data, 1, axis=1)  # drop the binary sex column
    return X, _public_bounds(X)


def load(name, seed, n_train):
    """``(X_train, X_test, bounds)``; the split (and a simulator's rows) from ``seed``."""
    rng = np.random.default_rng(seed)
    if name == "nonlinear":
        X, bounds = _nonlinear(n_train + 5000, rng)
    elif name == "banana":
        X, bounds = _banana(n_train + 5000, rng)
    elif name == "randhie":
        X, bounds = _randhie(rng)
    else:
        X, bounds = _diabetes(rng)
    perm = rng.permutation(len(X))
    n_tr = min(n_train, int(0.7 * len(X)))
    return X[perm[:n_tr]], X[perm[n_tr:]], bounds


# ---------------------------------------------------------------------- baselines
def _gauss_ll(X, mean, cov):
    from scipy.stats import multivariate_normal

    return float(multivariate_normal(mean, cov, allow_singular=False).logpdf(X).mean())


def full_gaussian(Xtr, Xte):
    return _gauss_ll(Xte, Xtr.mean(0), np.cov(Xtr.T) + 1e-9 * np.eye(Xtr.shape[1]))


def diagonal_gaussian(Xtr, Xte):
    return _gauss_ll(Xte, Xtr.mean(0), np.diag(Xtr.var(0) + 1e-12))


def gaussian_mixture(Xtr, Xte, seed):
    from sklearn.mixture import GaussianMixture

    fits = [
        GaussianMixture(k, covariance_type="full", random_state=seed, reg_covar=1e-6).fit(Xtr)
        for k in (1, 2, 4, 8)
    ]
    best = min(fits, key=lambda g: g.bic(Xtr))
    return float(best.score(Xte)), best.n_components


def dp_gaussian(Xtr, Xte, bounds, epsilon, delta, rng):
    """Noisy mean and covariance of the rows scaled onto ``[-1, 1]^d`` (module docstring)."""
    from skdp.mechanisms import gaussian_sigma

    lo, hi = np.array(bounds).T
    scale = 2.0 / (hi - lo)
    Z = np.clip(Xtr, lo, hi) * scale - (lo * scale + 1.0)
    n, d = Z.shape
    s1 = gaussian_sigma(sensitivity=math.sqrt(d), epsilon=epsilon / 2, delta=delta / 2)
    s2 = gaussian_sigma(sensitivity=float(d), epsilon=epsilon / 2, delta=delta / 2)
    mean = (Z.sum(0) + s1 * rng.standard_normal(d)) / n
    S = Z.T @ Z
    iu = np.triu_indices(d)
    noise = np.zeros((d, d))
    noise[iu] = s2 * rng.standard_normal(iu[0].size)
    S = S + noise
    S = np.triu(S) + np.triu(S, 1).T
    cov = S / n - np.outer(mean, mean)
    w, V = np.linalg.eigh(cov)
    cov = (V * np.maximum(w, 1e-3)) @ V.T
    Zte = Xte * scale - (lo * scale + 1.0)
    return _gauss_ll(Zte, mean, cov) + float(np.sum(np.log(scale)))


def dp_flow(Xtr, Xte, bounds, epsilon, seed, **kw):
    from skdp.density import DPFlowDensity

    t = time.perf_counter()
    est = DPFlowDensity(
        epsilon=epsilon, delta=1e-5, bounds=dict(enumerate(bounds)), device="cpu",
        random_state=seed, **kw,
    ).fit(Xtr)  # fmt: skip
    return est.score(Xte), time.perf_counter() - t


# ---------------------------------------------------------------------------- run
def run(tables, epsilons, seeds, n_train, paper):
    rows = []
    for name in tables:
        for seed in seeds:
            Xtr, Xte, bounds = load(name, seed, n_train)
            rng = np.random.default_rng(10_000 + seed)
            base = {"table": name, "seed": seed, "n": len(Xtr), "d": Xtr.shape[1]}
            rows.append({**base, "model": "full Gaussian (non-private)", "epsilon": math.inf,
                         "ll": full_gaussian(Xtr, Xte), "s": 0.0})  # fmt: skip
            rows.append({**base, "model": "diagonal Gaussian (non-private)", "epsilon": math.inf,
                         "ll": diagonal_gaussian(Xtr, Xte), "s": 0.0})  # fmt: skip
            ll, k = gaussian_mixture(Xtr, Xte, seed)
            rows.append({**base, "model": f"GaussianMixture (non-private, BIC: {k})",
                         "epsilon": math.inf, "ll": ll, "s": 0.0})  # fmt: skip
            for eps in epsilons:
                ll = dp_gaussian(Xtr, Xte, bounds, eps, 1e-5, rng)
                rows.append({**base, "model": "DP Gaussian", "epsilon": eps, "ll": ll, "s": 0.0})
                models = [("DP Gaussian copula", {"n_layers": 0}), ("DPFlowDensity", {})]
                if paper:
                    models.append(("DPFlowDensity paper (base='none')", {"base": "none"}))
                for label, kw in models:
                    ll, s = dp_flow(Xtr, Xte, bounds, eps, seed, **kw)
                    rows.append({**base, "model": label, "epsilon": eps, "ll": ll, "s": s})
                    print(f"  {name} seed={seed} eps={eps} {label}: {ll:.3f} ({s:.0f} s)",
                          flush=True)  # fmt: skip
    return rows


def report(rows):
    import pandas as pd

    df = pd.DataFrame(rows)
    df["model"] = df["model"].str.replace(r" \(non-private, BIC: \d+\)", " (non-private)",
                                          regex=True)  # fmt: skip
    g = df.groupby(["table", "n", "d", "model", "epsilon"], sort=False)
    out = g["ll"].agg(["mean", "std", "count"]).join(g["s"].mean().rename("fit_s"))
    with pd.option_context("display.width", 160, "display.max_rows", 500):
        print(out.round(3).to_string())
    ref = df[df.model == "full Gaussian (non-private)"].set_index(["table", "seed"])["ll"]
    flow = df[df.model == "DPFlowDensity"].set_index(["table", "seed", "epsilon"])["ll"]
    gap = (flow - ref.reindex(flow.index.droplevel("epsilon")).to_numpy()).groupby(
        ["table", "epsilon"]
    )
    print("\nDPFlowDensity minus the non-private full Gaussian (nats/row; mean, min over seeds):")
    print(gap.agg(["mean", "min"]).round(3).to_string())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1 seed, epsilon 5 only")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--n-train", type=int, default=10_000)
    p.add_argument("--tables", default=",".join(TABLES))
    p.add_argument("--epsilons", default="1,5")
    p.add_argument("--paper", action="store_true", help="also the seed paper's base='none'")
    a = p.parse_args()
    seeds = [0] if a.quick else list(range(a.seeds))
    epsilons = [5.0] if a.quick else [float(e) for e in a.epsilons.split(",")]
    print(f"load average {os.getloadavg()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    warnings.simplefilter("ignore")
    t = time.perf_counter()
    rows = run(a.tables.split(","), epsilons, seeds, a.n_train, a.paper)
    report(rows)
    print(f"total {time.perf_counter() - t:.0f} s; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
