"""Benchmark of DPLinearRegression on small, wide public tables.

Median test R^2 over ``--seeds`` seeds (each seed: a new random subsample of the training
rows, the test rows, and new noise) at epsilon 0.5, 1 and 3, for

* ``mean``: the private mean predictor, the clipped target's mean with Laplace noise and
  the whole epsilon (add/remove one row, ``n`` public: scale ``(hi - lo) / (2 n eps)``);
* ``prev``: the default before private centring (Laplace release, adaptive ridge on the whole
  augmented system, so shrinking towards the middle of ``bounds_y``), reproduced by the
  current code with the private centring switched off;
* ``prev-G``: the same with ``mechanism="gaussian", delta=1/n^2``;
* ``skdp``: ``DPLinearRegression()`` at its defaults (``delta=1e-5``:
  ``mechanism="auto"`` picks the Laplace or the Gaussian release by its public rule);
* ``skdp-0``: the defaults with ``delta=0`` (pure epsilon: always the Laplace release);
* ``OLS``: non-private least squares on the same rows.

Tables (package-shipped, every bound declared from the codebook or as a stated
plausibility range, never read off the rows):

* ``diabetes``: scikit-learn's ``load_diabetes(scaled=False)`` (442 rows, 10 features,
  raw clinical units; the README's bounds, target 25-346 from the documentation);
* ``star98``: statsmodels' California school districts (303 rows): percentage of
  students above the national math median on 11 district features (percentages
  0-100; teachers' mean years of service 0-40; salary 20-120 k$; spending per pupil
  1-15 k$; pupil-teacher ratio 5-50);
* ``anes96``: statsmodels' 1996 election survey (944 rows): the respondent's 1-7
  left-right self-placement on party identification (0-6), placements of Clinton and
  Dole (1-7), age (18-100), education (1-7), income (1-24), TV news days (0-7);
* ``fair``: statsmodels' affairs survey (6,366 rows): years married on age (16-60),
  children (0-10), religiousness (1-4), education (9-20), marriage rating (1-5); target
  declared 0-40;
* ``randhie``: statsmodels' RAND Health Insurance Experiment (20,190 rows): the count of
  outpatient MD visits (declared 0-52 a year; mean 2.9) on nine plan and health
  columns (``_public_tables.RANDHIE_BOUNDS``);
* ``count``: a simulated skewed count (the shape a newcomer met: declared 0-14, mean about
  0.3): Poisson with a log-linear mean in age (18-90), a 0/1 column and BMI (15-50).

Training subsamples of 100-3,600 rows; the test rows are up to 2,000 of the others.
Without statsmodels (not a dependency of skdp) its tables are skipped with a note.

Run ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/linear_regression_small.py``
(about 2 minutes at 20 seeds). The results and their reading:
``doc/benchmarks_models.rst`` (:ref:`benchmarks-linear-regression-small`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

import skdp.linear_model._functional_plan as _functional_plan
from skdp.linear_model import DPLinearRegression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _public_tables import RANDHIE_BOUNDS, statsmodels_table  # noqa: E402

EPSILONS = (0.5, 1.0, 3.0)
N_TEST = 2000

DIABETES_BOUNDS = {
    "age": (18, 90), "sex": (1, 2), "bmi": (15, 50), "bp": (50, 150), "s1": (80, 350),
    "s2": (20, 300), "s3": (15, 110), "s4": (1, 12), "s5": (3.0, 6.9), "s6": (50, 200),
}  # fmt: skip
STAR98_BOUNDS = {
    "LOWINC": (0, 100), "PERASIAN": (0, 100), "PERBLACK": (0, 100), "PERHISP": (0, 100),
    "PERMINTE": (0, 100), "AVYRSEXP": (0, 40), "AVSALK": (20, 120), "PERSPENK": (1, 15),
    "PTRATIO": (5, 50), "PCTAF": (0, 100), "PCTYRRND": (0, 100),
}  # fmt: skip
ANES96_BOUNDS = {
    "PID": (0, 6), "ClinLR": (1, 7), "DoleLR": (1, 7), "age": (18, 100), "educ": (1, 7),
    "income": (1, 24), "TVnews": (0, 7),
}  # fmt: skip
FAIR_BOUNDS = {
    "age": (16, 60), "children": (0, 10), "religious": (1, 4), "educ": (9, 20),
    "rate_marriage": (1, 5),
}  # fmt: skip


def _box(bounds):
    return (
        np.array([v[0] for v in bounds.values()], float),
        np.array([v[1] for v in bounds.values()], float),
    )


def diabetes():
    X, y = load_diabetes(scaled=False, return_X_y=True, as_frame=True)
    return (
        X[list(DIABETES_BOUNDS)].to_numpy(float),
        y.to_numpy(float),
        _box(DIABETES_BOUNDS),
        (25.0, 346.0),
    )


def star98():
    d = statsmodels_table("star98")
    if d is None:
        return None
    y = 100 * d["NABOVE"].to_numpy(float) / (d["NABOVE"] + d["NBELOW"]).to_numpy(float)
    return d[list(STAR98_BOUNDS)].to_numpy(float), y, _box(STAR98_BOUNDS), (0.0, 100.0)


def anes96():
    d = statsmodels_table("anes96")
    if d is None:
        return None
    return (
        d[list(ANES96_BOUNDS)].to_numpy(float),
        d["selfLR"].to_numpy(float),
        _box(ANES96_BOUNDS),
        (1.0, 7.0),
    )


def fair():
    d = statsmodels_table("fair")
    if d is None:
        return None
    return (
        d[list(FAIR_BOUNDS)].to_numpy(float),
        d["yrs_married"].to_numpy(float),
        _box(FAIR_BOUNDS),
        (0.0, 40.0),
    )


def randhie():
    d = statsmodels_table("randhie")
    if d is None:
        return None
    return (
        d[list(RANDHIE_BOUNDS)].to_numpy(float),
        d["mdvis"].to_numpy(float),
        _box(RANDHIE_BOUNDS),
        (0.0, 52.0),
    )


def count(n=20000, seed=12345):
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 90, n)
    flag = rng.integers(0, 2, n)
    bmi = rng.normal(27, 5, n).clip(15, 50)
    y = rng.poisson(np.exp(-3.8 + 0.03 * age + 0.4 * flag + 0.02 * bmi)).clip(0, 14)
    X = np.column_stack([age, flag, bmi])
    return X, y.astype(float), (np.array([18.0, 0, 15]), np.array([90.0, 1, 50])), (0.0, 14.0)


TABLES = {"diabetes": diabetes, "star98": star98, "anes96": anes96, "fair": fair,
          "randhie": randhie, "count": count}  # fmt: skip
SETTINGS = [("diabetes", 331), ("diabetes", 100), ("star98", 227), ("star98", 100),
            ("anes96", 708), ("anes96", 200), ("fair", 300), ("fair", 3000),
            ("randhie", 1000), ("randhie", 3600), ("count", 400), ("count", 3600)]  # fmt: skip
METHODS = ("mean", "prev", "prev-G", "skdp", "skdp-0", "OLS")


@contextlib.contextmanager
def previous_default():
    """The fit before the private centring: share 0, ridge factor 1."""
    saved = _functional_plan._centre_share
    _functional_plan._centre_share = lambda n, epsilon: 0.0
    try:
        yield
    finally:
        _functional_plan._centre_share = saved


def private_mean(y, by, eps, rng, n):
    lo, hi = by
    half = (hi - lo) / 2
    ys = (np.clip(y, lo, hi) - (lo + hi) / 2) / half
    m = float(np.clip((ys.sum() + rng.laplace(0.0, 1.0 / eps)) / n, -1, 1))
    return (lo + hi) / 2 + half * m


def run_setting(table, n, seeds, data):
    X_all, y_all, bx, by = data
    r2 = {(m, e): [] for m in METHODS for e in EPSILONS}
    for seed in range(seeds):
        idx = np.random.default_rng(seed).permutation(len(y_all))
        tr, te = idx[:n], idx[n : n + N_TEST]
        X, y, Xt, yt = X_all[tr], y_all[tr], X_all[te], y_all[te]
        ols = r2_score(yt, LinearRegression().fit(X, y).predict(Xt))
        for eps in EPSILONS:
            rng = np.random.default_rng([seed, int(eps * 100)])
            r2[("mean", eps)].append(
                r2_score(yt, np.full(len(yt), private_mean(y, by, eps, rng, n)))
            )
            kw = dict(epsilon=eps, bounds_X=bx, bounds_y=by, random_state=seed)
            with previous_default():
                m = DPLinearRegression(mechanism="functional", **kw).fit(X, y)
                r2[("prev", eps)].append(r2_score(yt, m.predict(Xt)))
                m = DPLinearRegression(mechanism="gaussian", delta=1.0 / n**2, **kw).fit(X, y)
                r2[("prev-G", eps)].append(r2_score(yt, m.predict(Xt)))
            m = DPLinearRegression(**kw).fit(X, y)
            r2[("skdp", eps)].append(r2_score(yt, m.predict(Xt)))
            m = DPLinearRegression(delta=0.0, **kw).fit(X, y)
            r2[("skdp-0", eps)].append(r2_score(yt, m.predict(Xt)))
            r2[("OLS", eps)].append(ols)
    return {k: float(np.median(v)) for k, v in r2.items()}


def _f(v):
    return f"{v:.3f}" if v > -10 else "<-10"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--tables", help="comma-separated tables (default all)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    only = set(args.tables.split(",")) if args.tables else None
    t0 = time.perf_counter()
    print(
        f"### Median test R^2 over {args.seeds} seeds (flags: '<mean' skdp more than 0.02 below "
        "the private mean, '<mean-0' skdp-0; '<prev' skdp below max(prev, prev-G); "
        "'<prev-0' skdp-0 below it)\n"
    )
    print("|table|n|d|eps|mean|prev|prev-G|skdp|skdp-0|OLS|flags|")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    cache = {}
    tally = {"cells": 0, "<mean": 0, "<mean-0": 0, "<prev": 0, "<prev-0": 0}
    for table, n in SETTINGS:
        if only and table not in only:
            continue
        if table not in cache:
            cache[table] = TABLES[table]()
        if cache[table] is None:
            continue
        med = run_setting(table, n, args.seeds, cache[table])
        d = cache[table][0].shape[1]
        for eps in EPSILONS:
            r = {m: med[(m, eps)] for m in METHODS}
            best_prev = max(r["prev"], r["prev-G"])
            flags = []
            if r["skdp"] < r["mean"] - 0.02:
                flags.append("<mean")
            if r["skdp-0"] < r["mean"] - 0.02:
                flags.append("<mean-0")
            if r["skdp"] < best_prev:
                flags.append("<prev")
            if r["skdp-0"] < best_prev:
                flags.append("<prev-0")
            tally["cells"] += 1
            for f in flags:
                tally[f] += 1
            cells = "|".join(_f(r[m]) for m in METHODS)
            print(f"|{table}|{n}|{d}|{eps}|{cells}|{' '.join(flags) or 'ok'}|", flush=True)
    print(
        f"\ncells: {tally['cells']}; skdp more than 0.02 below the private mean: "
        f"{tally['<mean']} (skdp-0: {tally['<mean-0']}); below the better previous "
        f"mechanism: skdp {tally['<prev']}, skdp-0 {tally['<prev-0']}; "
        f"{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
