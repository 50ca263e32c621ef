"""Benchmark of DPLinearRegression: utility against OLS, the previous default and
diffprivlib, and fit time.

Part 1 -- utility grid. Test R^2, median and 10th percentile over ``--seeds`` seeds (each
seed: new data or a new train/test split, and new noise), for

* ``OLS``: non-private least squares on the same split;
* ``previous``: skdp's previous default (before the adaptive ridge), reproduced in
  :func:`previous_default`: Zhang et al.'s release of all ``d'^2 + d'`` coefficients with
  Laplace noise of scale ``(d'^2 + 2 d') / eps`` and the ridge ``5 sqrt(2)`` scale;
* ``skdp``: ``DPLinearRegression()`` defaults (pure eps: Laplace release of the distinct
  statistics, adaptive ridge from a private smallest eigenvalue);
* ``gauss``: ``DPLinearRegression(mechanism="gaussian", delta=1/n^2)``;
* ``diffprivlib``: diffprivlib 0.6.6's ``LinearRegression`` with the same bounds. It does
  not import with scikit-learn >= 1.6, so it runs in a subprocess of a separate virtual
  environment (``--dpl-python``, default ``/tmp/dplvenv/bin/python``; create it with
  ``python -m venv /tmp/dplvenv && /tmp/dplvenv/bin/pip install diffprivlib
  "scikit-learn<1.6"``). Without it the column says ``n/a``.

Every model gets the same public bounds (declared, never read off the data):

* ``box``: features uniform on their box ``[-1, 1]^d``, ``y = X w + 0.3 + N(0, 0.3^2)``,
  ``w`` a random unit vector per seed (OLS R^2 about 0.79), ``bounds_y = +-(sum |w| +
  1.5)``;
* ``mkreg``: :func:`sklearn.datasets.make_regression` (standard normal features,
  ``noise=10``, ``bias=20``), ``bounds_X = (-4, 4)`` (four standard deviations),
  ``bounds_y = 20 +- 4 sd(y)`` from the generator's coefficients;
* ``loose``: correlated (0.3) features concentrated in a loose public box (``50 + 12.5 Z``
  in ``(0, 100)``), ``y`` linear with ``R^2 = 0.986``, ``bounds_y`` the range of the
  linear map over the box: built to reproduce a reported 9,000-row, 3-feature example
  (previous default 0.90 at eps=1 and 0.31 at eps=0.1, against 0.895 and 0.353 there);
* ``nonlin``: :func:`skdp.datasets.make_nonlinear_repeated_measures` (Su et al. 2023): the
  4 covariates on their public box ``(0, a_j)``, target the mean of the 5 measurements,
  ``bounds_y`` the regression function's range over the box +- 1 (a linear model is
  misspecified here);
* ``diabetes``: scikit-learn's bundled diabetes data (442 rows, 10 features, 75/25 split),
  ``bounds_X = (-0.2, 0.2)`` (sklearn's scaling), ``bounds_y = (25, 346)`` (documented);
* ``randhie``: statsmodels' RAND Health Insurance Experiment (20,190 rows, 80/20 split,
  16,152 training rows): ``ln(1 + mdvis)`` on ``lncoins, idp, physlm, hlthf, hlthp``
  (``d = 5``; ``d = 2``: the first two). Bounds from the codebook: ``lncoins`` in ``[0,
  ln 101]`` (coinsurance 0..100 %), the others 0/1; the target's cap ``ln 101`` (100
  visits a year) is declared;
* ``fair``: statsmodels' affairs survey (6,366 rows, 80/20 split, 5,092 training rows):
  ``yrs_married`` on ``age, children, religious, educ, rate_marriage`` (``d = 5``; ``d =
  2``: age, children). Codebook ranges for religious (1..4), educ (9..20) and
  rate_marriage (1..5); declared caps for age (16, 60), children (0, 10) and the target
  (0, 40). No bound is read off the data. Without statsmodels (not a dependency of
  skdp) these rows are skipped with a printed note.

Part 2 -- scaling. Fit time (best of 5; of 2 at 10^7) for n = 10^4 ... 10^7 rows, d = 10,
with BLAS limited to one thread, and the peak extra memory of ``fit`` (tracemalloc).

Run ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/linear_regression.py`` (about 4
minutes on one core), ``--quick`` (5 seeds, fewer settings), ``--only utility|scaling``
or ``--problems fair,randhie`` (some rows of the utility grid).

Results, with the conditions they were measured under and their reading: the
documentation page ``doc/benchmarks_models.rst`` (:ref:`benchmarks-linear-regression`).

Fit time and peak extra memory, d = 10, one BLAS thread

|n|fit time (s)|s per 10^6 rows|peak extra memory in fit (MiB)|X (MiB)|
|---|---|---|---|---|
|1e+04|0.003|0.282|0.93|1|
|1e+05|0.024|0.240|8.27|8|
|1e+06|0.208|0.208|10.64|76|
|1e+07|2.107|0.211|10.65|763|
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import pickle
import struct
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from sklearn.datasets import load_diabetes, make_regression
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from skdp.datasets import NONLINEAR_W_UPPER, make_nonlinear_repeated_measures
from skdp.datasets import nonlinear_regression_function as _f_nonlin
from skdp.linear_model import DPLinearRegression
from skdp.linear_model._functional_release import _trimmed_minimiser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _public_tables import statsmodels_table  # noqa: E402

EPSILONS = (1.0, 0.1)
N_TEST = 5000


# ----------------------------------------------------------------------- problems
def box(seed, n, d):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)  # a random direction: signal variance 1/3, R^2 about 0.79
    X = rng.uniform(-1, 1, size=(n + N_TEST, d))
    y = X @ w + 0.3 + rng.normal(0, 0.3, n + N_TEST)
    top = float(np.abs(w).sum() + 1.5)
    return X[:n], X[n:], y[:n], y[n:], (-1.0, 1.0), (-top, top)


def mkreg(seed, n, d):
    X, y, coef = make_regression(
        n + N_TEST, d, n_informative=d, noise=10.0, bias=20.0, coef=True, random_state=seed
    )
    coef = np.atleast_1d(coef)
    sd = math.sqrt(float(coef @ coef) + 100.0)
    return X[:n], X[n:], y[:n], y[n:], (-4.0, 4.0), (20 - 4 * sd, 20 + 4 * sd)


_LOOSE_W = np.array([0.8, -0.5, 0.3, 0.6, -0.4, 0.2, 0.7, -0.3, 0.5, 0.1])


def loose(seed, n, d):
    rng = np.random.default_rng(seed)
    C = 0.3 * np.ones((d, d)) + 0.7 * np.eye(d)
    Z = np.clip(rng.multivariate_normal(np.zeros(d), C, n + N_TEST) * 0.25, -1, 1)
    X = 50 + 50 * Z  # public box (0, 100)
    w = _LOOSE_W[:d]
    f = X @ w
    y = f + 10 + rng.normal(0, 0.12 * f.std(), n + N_TEST)
    lo = np.where(w > 0, 0, 100) @ w + 10
    hi = np.where(w > 0, 100, 0) @ w + 10
    return X[:n], X[n:], y[:n], y[n:], (0.0, 100.0), (float(lo), float(hi))


def nonlin(seed, n, d=4):
    data = make_nonlinear_repeated_measures(n + N_TEST, random_state=seed)
    X, y = data[:, :4], data[:, 4:].mean(axis=1)
    upper = np.asarray(NONLINEAR_W_UPPER)
    corners = np.array(np.meshgrid(*[[0.0, u] for u in upper])).reshape(4, -1).T
    f = _f_nonlin(corners, (0.2, 1.0, 0.8, -1.2, 0.6))
    bx = (np.zeros(4), upper)
    return X[:n], X[n:], y[:n], y[n:], bx, (float(f.min() - 1), float(f.max() + 1))


def diabetes(seed, n=None, d=None):
    X, y = load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
    return X_tr, X_te, y_tr, y_te, (-0.2, 0.2), (25.0, 346.0)


# Package-shipped public tables (statsmodels; not a dependency of skdp). Every bound is
# declared from the codebook (``statsmodels.api.datasets.<name>.NOTE``) or, where the
# codebook gives no range, as a stated plausibility cap: none is read off the data.
RANDHIE_X = ["lncoins", "idp", "physlm", "hlthf", "hlthp"]
# lncoins = ln(coinsurance + 1), 0 <= coinsurance <= 100; the others are 0/1 indicators
RANDHIE_BX = (np.zeros(5), np.array([math.log(101.0), 1.0, 1.0, 1.0, 1.0]))
# target ln(1 + mdvis), mdvis a count of visits, declared cap 100 visits a year
RANDHIE_BY = (0.0, math.log(101.0))
FAIR_X = ["age", "children", "religious", "educ", "rate_marriage"]
# codebook: religious 1..4, educ 9..20, rate_marriage 1..5; age (16, 60) and children
# (0, 10) are declared caps for married women (the codebook gives no range)
FAIR_BX = (np.array([16.0, 0.0, 1.0, 9.0, 1.0]), np.array([60.0, 10.0, 4.0, 20.0, 5.0]))
# target yrs_married, declared cap (0, 40)
FAIR_BY = (0.0, 40.0)


def _public_split(X, y, bx, by, seed):
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=seed)
    return X_tr, X_te, y_tr, y_te, bx, by


def randhie(seed, n=None, d=5):
    """RAND Health Insurance Experiment (20,190 rows): ln(1 + outpatient MD visits) on
    coinsurance, deductible plan, physical limitation and fair/poor health (80/20
    split, 16,152 training rows)."""
    data = statsmodels_table("randhie")
    X = data[RANDHIE_X[:d]].to_numpy(float)
    y = np.log1p(data["mdvis"].to_numpy(float))
    bx = (RANDHIE_BX[0][:d], RANDHIE_BX[1][:d])
    return _public_split(X, y, bx, RANDHIE_BY, seed)


def fair(seed, n=None, d=5):
    """Fair's affairs survey (6,366 rows): years married on age, children,
    religiousness, education and marriage rating (the first ``d``; 80/20 split, 5,092
    training rows)."""
    data = statsmodels_table("fair")
    X = data[FAIR_X[:d]].to_numpy(float)
    y = data["yrs_married"].to_numpy(float)
    return _public_split(X, y, (FAIR_BX[0][:d], FAIR_BX[1][:d]), FAIR_BY, seed)


PROBLEMS = {
    "box": box,
    "mkreg": mkreg,
    "loose": loose,
    "nonlin": nonlin,
    "diabetes": diabetes,
    "randhie": randhie,
    "fair": fair,
}
PUBLIC = ("diabetes", "randhie", "fair")


def settings(quick):
    ns = (1000, 5000) if quick else (1000, 5000, 20000)
    ds = (1, 3, 5) if quick else (1, 3, 5, 10)
    out = [(p, n, d) for p in ("box", "mkreg", "loose") for n in ns for d in ds]
    out += [("loose", 9000, 3)]  # the reported example
    out += [("nonlin", n, 4) for n in ns] + [("diabetes", 331, 10)]
    if statsmodels_table("randhie") is not None:
        out += [("randhie", 16152, 5), ("randhie", 16152, 2)]
    if statsmodels_table("fair") is not None:
        out += [("fair", 5092, 5), ("fair", 5092, 2)]
    return out


# --------------------------------------------------------------- previous default
def previous_default(X, y, bx, by, eps, seed):
    """skdp's DPLinearRegression before the adaptive ridge (declared bounds): Laplace noise of
    scale ``(d'^2 + 2d') / eps`` on every entry of ``X~^T X~`` and of ``-2 X~^T y~``,
    symmetrisation, ridge ``5 sqrt(2)`` scale, trimmed closed-form minimiser.
    Returns ``(coef, intercept)``."""
    p = X.shape[1]
    lo = np.broadcast_to(np.asarray(bx[0], float), p)
    hi = np.broadcast_to(np.asarray(bx[1], float), p)
    ax, cx = 2 / (hi - lo), -2 * lo / (hi - lo) - 1
    ay, cy = 2 / (by[1] - by[0]), -2 * by[0] / (by[1] - by[0]) - 1
    Xt = np.hstack([np.clip(X, lo, hi) * ax + cx, np.ones((len(X), 1))])
    yt = np.clip(y, *by) * ay + cy
    d = p + 1
    scale = (d * d + 2 * d) / eps
    rng = np.random.default_rng([seed, 19])
    M = Xt.T @ Xt + rng.laplace(0, scale, (d, d))
    alpha = -2 * Xt.T @ yt + rng.laplace(0, scale, d)
    M = (M + M.T) / 2 + 5 * math.sqrt(2) * scale * np.eye(d)
    w, _ = _trimmed_minimiser(M, alpha)
    return w[:p] * ax / ay, float((w[:p] @ cx + w[p] - cy) / ay)


# ------------------------------------------------------------ diffprivlib worker
_WORKER = r"""
import pickle, struct, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from diffprivlib.models import LinearRegression
from sklearn.metrics import r2_score
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = inp.read(8)
    if len(head) < 8:
        break
    task = pickle.loads(inp.read(struct.unpack("<Q", head)[0]))
    p = task["X"].shape[1]
    lo = np.broadcast_to(np.asarray(task["bx"][0], float), p)
    hi = np.broadcast_to(np.asarray(task["bx"][1], float), p)
    res = []
    for eps in task["eps"]:
        m = LinearRegression(epsilon=eps, bounds_X=(lo, hi), bounds_y=task["by"],
                             random_state=task["seed"])
        m.fit(task["X"], task["y"])
        res.append(float(r2_score(task["yt"], m.predict(task["Xt"]))))
    blob = pickle.dumps(res)
    out.write(struct.pack("<Q", len(blob)) + blob)
    out.flush()
"""


class Diffprivlib:
    """diffprivlib's LinearRegression in a subprocess of another Python (or ``None``)."""

    def __init__(self, python):
        self.proc = None
        self.version = None
        if not python or not os.path.exists(python):
            return
        try:
            self.version = subprocess.run(
                [
                    python,
                    "-c",
                    "import diffprivlib, sklearn; "
                    "print(diffprivlib.__version__, sklearn.__version__)",
                ],
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            ).stdout.strip()
        except (subprocess.SubprocessError, OSError):
            return
        self.proc = subprocess.Popen(
            [python, "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
        )

    def r2(self, X, Xt, y, yt, bx, by, eps, seed):
        if self.proc is None:
            return [math.nan] * len(eps)
        blob = pickle.dumps(
            {"X": X, "Xt": Xt, "y": y, "yt": yt, "bx": bx, "by": by, "eps": eps, "seed": seed},
            protocol=4,
        )
        self.proc.stdin.write(struct.pack("<Q", len(blob)) + blob)
        self.proc.stdin.flush()
        size = struct.unpack("<Q", self.proc.stdout.read(8))[0]
        return pickle.loads(self.proc.stdout.read(size))

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


# ------------------------------------------------------------------------ utility
METHODS = ("OLS", "previous", "skdp", "gauss", "diffprivlib")


def run_setting(problem, n, d, seeds, dpl, methods=METHODS):
    r2 = {(m, e): [] for m in METHODS for e in EPSILONS}
    for seed in range(seeds):
        X, Xt, y, yt, bx, by = PROBLEMS[problem](seed, n, d)
        ols = LinearRegression().fit(X, y).score(Xt, yt)
        for i, r in enumerate(dpl.r2(X, Xt, y, yt, bx, by, list(EPSILONS), seed)):
            r2[("diffprivlib", EPSILONS[i])].append(r)
        for eps in EPSILONS:
            r2[("OLS", eps)].append(ols)
            coef, b0 = previous_default(X, y, bx, by, eps, seed)
            r2[("previous", eps)].append(r2_score(yt, Xt @ coef + b0))
            m = DPLinearRegression(epsilon=eps, bounds_X=bx, bounds_y=by, random_state=seed)
            r2[("skdp", eps)].append(r2_score(yt, m.fit(X, y).predict(Xt)))
            if "gauss" not in methods:
                continue
            g = DPLinearRegression(
                epsilon=eps,
                delta=1.0 / len(y) ** 2,
                mechanism="gaussian",
                bounds_X=bx,
                bounds_y=by,
                random_state=seed,
            )
            r2[("gauss", eps)].append(r2_score(yt, g.fit(X, y).predict(Xt)))
    return {k: np.asarray(v) for k, v in r2.items()}


def _cell(v):
    if v.size == 0 or np.all(np.isnan(v)):
        return "n/a"
    med, p10 = np.median(v), np.quantile(v, 0.1)
    med_s = f"{med:.3f}" if med > -10 else "<-10"
    p10_s = f"{p10:.2f}" if p10 > -10 else "<-10"
    return f"{med_s} ({p10_s})"


def flags(problem, n, d, eps, r):
    """``<prev``: skdp's median below the previous default's. Where a target is
    set (n >= 5000, d <= 5): ``ok``, or what misses (``OLS-x``: x below OLS at
    eps=1; ``p10<0``: 10th percentile below 0 at eps=0.1; ``miss``: median below the
    previous default's). ``G``/``L``: whether the Gaussian or the Laplace release has
    the higher median."""
    med = {m: np.median(r[(m, eps)]) for m in METHODS}
    out = []
    if med["skdp"] < med["previous"]:
        out.append("<prev")
    if problem != "diabetes" and n >= 5000 and d <= 5:
        if eps == 1.0:
            gap = med["OLS"] - med["skdp"]
            out.append("ok" if gap <= 0.02 else f"OLS-{gap:.2f}")
        else:
            p10 = np.quantile(r[("skdp", eps)], 0.1)
            ok = p10 >= 0 and med["skdp"] >= med["previous"]
            out.append("ok" if ok else ("p10<0" if p10 < 0 else "miss"))
    out.append("G" if med["gauss"] > med["skdp"] else "L")
    return " ".join(out)


def utility_table(seeds, quick, dpl_python, problems=None):
    dpl = Diffprivlib(dpl_python)
    print(
        f"\n### Test R^2, median (10th percentile) over {seeds} seeds; diffprivlib: "
        f"{dpl.version or 'not available (n/a)'}\n"
    )
    print("|problem|n|d|eps|OLS|previous|skdp|gauss (1/n^2)|diffprivlib|flags|")
    print("|---|---|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    summary = {"<prev": 0, "targets": 0, "met": 0, "gauss_wins": 0, "rows": 0}
    recheck = []
    for problem, n, d in settings(quick):
        if problems and problem not in problems:
            continue
        r = run_setting(problem, n, d, seeds, dpl)
        for eps in EPSILONS:
            f = flags(problem, n, d, eps, r)
            summary["rows"] += 1
            summary["<prev"] += "<prev" in f
            if "<prev" in f:
                recheck.append((problem, n, d, eps))
            summary["gauss_wins"] += f.endswith("G")
            tags = f.split()
            if any(t in ("ok", "p10<0", "miss") or t.startswith("OLS-") for t in tags):
                summary["targets"] += 1
                summary["met"] += "ok" in tags
            cells = "|".join(_cell(r[(m, eps)]) for m in METHODS[1:])
            ols = np.median(r[("OLS", eps)])
            print(f"|{problem}|{n}|{d}|{eps}|{ols:.3f}|{cells}|{f}|", flush=True)
    dpl.close()
    if recheck:
        n_more = 5 * seeds
        print(f"\nRows with '<prev', again over {n_more} seeds (skdp and previous only):\n")
        for problem, n, d, eps in recheck:
            r = run_setting(problem, n, d, n_more, Diffprivlib(None), methods=("previous", "skdp"))
            print(
                f"|{problem}|{n}|{d}|{eps}|previous {_cell(r[('previous', eps)])}"
                f"|skdp {_cell(r[('skdp', eps)])}|",
                flush=True,
            )
    print(
        f"\nrows: {summary['rows']}; skdp median below previous: {summary['<prev']}; "
        f"targets met: {summary['met']}/{summary['targets']}; Gaussian median above "
        f"Laplace: {summary['gauss_wins']}/{summary['rows']} (G/L in flags); "
        f"{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}"
    )


# ------------------------------------------------------------------------ scaling
def scaling_table(sizes, d=10):
    from threadpoolctl import threadpool_limits

    print(f"\n### Fit time and peak extra memory, d = {d}, one BLAS thread\n")
    print("| n | fit time (s) | s per 10^6 rows | peak extra memory in fit (MiB) | X (MiB) |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=1):
        for n in sizes:
            X = rng.uniform(-1, 1, size=(n, d))
            y = X.sum(axis=1) + rng.normal(size=n)
            model = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-12, 12))
            times = []
            for _ in range(5 if n <= 10**6 else 2):
                gc.collect()
                t = time.perf_counter()
                model.fit(X, y)
                times.append(time.perf_counter() - t)
            gc.collect()
            tracemalloc.start()
            model.fit(X, y)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            best = min(times)
            print(
                f"| {n:.0e} | {best:.3f} | {best / n * 1e6:.3f} | {peak / 2**20:.2f} "
                f"| {X.nbytes / 2**20:.0f} |"
            )
            del X, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="5 seeds, n <= 5000, d <= 5")
    ap.add_argument("--only", choices=["utility", "scaling"], help="run one part")
    ap.add_argument("--dpl-python", default="/tmp/dplvenv/bin/python")
    ap.add_argument("--problems", help="comma-separated problems of the utility grid (default all)")
    args = ap.parse_args()
    seeds = 5 if args.quick else args.seeds
    sizes = (10**4, 10**5, 10**6) if args.quick else (10**4, 10**5, 10**6, 10**7)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    if args.only != "scaling":
        problems = args.problems.split(",") if args.problems else None
        utility_table(seeds, args.quick, args.dpl_python, problems)
    if args.only != "utility":
        scaling_table(sizes)


if __name__ == "__main__":
    main()
