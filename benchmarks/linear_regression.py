"""Benchmark of DPLinearRegression (functional mechanism): utility and fit time.

Part 1 -- utility. Test R^2 and MSE against epsilon in {0.1, 0.3, 1, 3, 10}, mean and
standard deviation over ``--seeds`` seeds (each seed: a new train/test split or a new
simulated data set, and new noise), next to non-private ordinary least squares on the
same split and, when it imports, diffprivlib's ``LinearRegression`` with the same bounds.

* scikit-learn's diabetes data (n = 442, 10 features; 75/25 split). The bundled features
  are centred and scaled so every value lies in (-0.2, 0.2): we declare
  ``bounds_X = (-0.2, 0.2)`` as domain knowledge about that scaling, and
  ``bounds_y = (25, 346)``, the documented range of the target.
* A simulated problem: n = 10^5 training rows (+ 10^4 test rows), d = 10 features
  uniform on [-1, 1], weights drawn once per seed from N(0, 1/d), Gaussian noise sd 0.5;
  ``bounds_X = (-1, 1)``, ``bounds_y = (-4, 4)``.
* The row "bounds=None" declares no bounds: 10 % of epsilon goes to a private estimate
  of them (``skdp.mechanisms.resolve_bounds``), the rest to the objective.

Part 2 -- scaling. Fit time (best of 5; of 2 at 10^7) for n = 10^4 ... 10^7 rows, d = 10, with BLAS
limited to one thread, and the peak extra memory of ``fit`` measured with tracemalloc
(numpy reports its allocations to it): the target is linear time, 10^6 x 10 in under
1 s on one core, and memory O(d^2) (plus a fixed chunk buffer), not O(n d).

Run ``python benchmarks/linear_regression.py`` (a few minutes) or ``--quick``.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import train_test_split

from skdp.linear_model import DPLinearRegression

EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)

try:  # optional comparison
    from diffprivlib.models import LinearRegression as DiffprivlibLR
except Exception:  # pragma: no cover - optional dependency
    DiffprivlibLR = None


def diabetes_split(seed):
    X, y = load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
    return X_tr, X_te, y_tr, y_te, (-0.2, 0.2), (25.0, 346.0)


def simulated_split(seed, n=100_000, n_test=10_000, d=10):
    rng = np.random.default_rng(10_000 + seed)
    w = rng.normal(0, 1 / np.sqrt(d), size=d)
    X = rng.uniform(-1, 1, size=(n + n_test, d))
    y = X @ w + 0.3 + rng.normal(0, 0.5, size=n + n_test)
    return X[:n], X[n:], y[:n], y[n:], (-1.0, 1.0), (-4.0, 4.0)


def evaluate(model, X_tr, X_te, y_tr, y_te):
    model.fit(X_tr, y_tr)
    pred = model.predict(X_te)
    return r2_score(y_te, pred), mean_squared_error(y_te, pred)


def utility_table(name, make_split, seeds):
    rows = {}
    for seed in range(seeds):
        X_tr, X_te, y_tr, y_te, bx, by = make_split(seed)
        r2, mse = evaluate(LinearRegression(), X_tr, X_te, y_tr, y_te)
        rows.setdefault(("OLS (non-private)", "-"), []).append((r2, mse))
        for eps in EPSILONS:
            m = DPLinearRegression(epsilon=eps, bounds_X=bx, bounds_y=by, random_state=seed)
            rows.setdefault(("skdp DPLinearRegression", eps), []).append(
                evaluate(m, X_tr, X_te, y_tr, y_te)
            )
            m = DPLinearRegression(epsilon=eps, random_state=seed)  # private bounds
            rows.setdefault(("skdp DPLinearRegression, bounds=None", eps), []).append(
                evaluate(m, X_tr, X_te, y_tr, y_te)
            )
            if DiffprivlibLR is not None:
                d = X_tr.shape[1]
                m = DiffprivlibLR(
                    epsilon=eps,
                    bounds_X=(np.full(d, bx[0]), np.full(d, bx[1])),
                    bounds_y=by,
                    random_state=seed,
                )
                rows.setdefault(("diffprivlib LinearRegression", eps), []).append(
                    evaluate(m, X_tr, X_te, y_tr, y_te)
                )
    print(f"\n### {name}: test R^2 and MSE, mean (sd) over {seeds} seeds\n")
    print("| model | epsilon | R^2 | MSE |")
    print("|---|---|---|---|")
    for (model, eps), vals in rows.items():
        v = np.array(vals)
        print(
            f"| {model} | {eps} | {v[:, 0].mean():.3f} ({v[:, 0].std():.3f}) "
            f"| {v[:, 1].mean():.4g} ({v[:, 1].std():.3g}) |"
        )
    if DiffprivlibLR is None:
        print("\n(diffprivlib is not installed: its column is omitted)")


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
    ap.add_argument("--quick", action="store_true", help="3 seeds, sizes up to 10^6")
    ap.add_argument("--only", choices=["utility", "scaling"], help="run one part")
    args = ap.parse_args()
    seeds = 3 if args.quick else args.seeds
    sizes = (10**4, 10**5, 10**6) if args.quick else (10**4, 10**5, 10**6, 10**7)
    if args.only != "scaling":
        utility_table("diabetes (n=442, d=10)", diabetes_split, seeds)
        utility_table("simulated (n=10^5, d=10)", simulated_split, seeds)
    if args.only != "utility":
        scaling_table(sizes)


if __name__ == "__main__":
    main()
