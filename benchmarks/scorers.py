"""Benchmark of the DP AUC / AP scorers (the shape of Lantz 2016, Fig. 7.5) and their speed.

Part 1 -- accuracy. A logistic regression is trained on half of scikit-learn's bundled
breast-cancer data using two features (mean texture, mean smoothness; a deliberately
mediocre model, AUC about 0.8, as in the thesis's experiments). Its decision values on the
other half are the "population": test sets of n positives and m = n negatives are drawn
from a smoothed bootstrap of those values (Gaussian kernel, bandwidth 0.1 standard
deviations per class), so that sizes up to 10,000 per class are possible without ties.
For each size and epsilon we report the mean absolute error of the DP value against the
exact value on the same test set ("DP error"; pure DP, delta=0, Cauchy-type noise, and
(epsilon, delta)-DP with Laplace noise), and the mean absolute error of the exact value
against the population value ("estimation error"), over ``--reps`` test sets.

Part 2 -- speed. Time per call of ``dp_roc_auc_score`` and ``dp_average_precision_score``
at N = 10**6 rows (target: under 0.5 s; the algorithm is O(N log N)).

Run ``python benchmarks/scorers.py`` (about a minute) or ``--quick``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skdp.metrics import dp_average_precision_score, dp_roc_auc_score

EPSILONS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
SIZES = (100, 1000, 10000)
METRICS = {"AUC": dp_roc_auc_score, "AP": dp_average_precision_score}


def population_scores(seed=0):
    """Held-out decision values of a logistic regression, split by class."""
    data = load_breast_cancer()
    X, y = data.data[:, [1, 4]], data.target
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=seed, stratify=y)
    model = LogisticRegression(max_iter=1000).fit(X_tr, y_tr)
    s = model.decision_function(X_te)
    return s[y_te == 1], s[y_te == 0]


def smoothed_bootstrap(pool, size, rng, bandwidth=0.1):
    return rng.choice(pool, size=size) + rng.normal(0.0, bandwidth * pool.std(), size=size)


def draw_test_set(pos, neg, n, rng):
    s = np.r_[smoothed_bootstrap(neg, n, rng), smoothed_bootstrap(pos, n, rng)]
    y = np.r_[np.zeros(n, dtype=int), np.ones(n, dtype=int)]
    return y, s


def accuracy_table(reps, delta, seed=0):
    pos, neg = population_scores()
    rng = np.random.default_rng(seed)
    # population values for n = m, from one very large balanced sample
    y_big, s_big = draw_test_set(pos, neg, 500_000, rng)
    population = {k: fn(y_big, s_big, epsilon=np.inf) for k, fn in METRICS.items()}
    rows = []
    for n in SIZES:
        sets = [draw_test_set(pos, neg, n, rng) for _ in range(reps)]
        for name, fn in METRICS.items():
            exact = np.array([fn(y, s, epsilon=np.inf) for y, s in sets])
            est_err = float(np.mean(np.abs(exact - population[name])))
            for k, eps in enumerate(EPSILONS):
                for d in (0.0, delta):
                    noisy = np.array(
                        [
                            fn(
                                y,
                                s,
                                epsilon=eps,
                                delta=d,
                                random_state=np.random.SeedSequence([seed, n, k, int(d > 0), i]),
                            )
                            for i, (y, s) in enumerate(sets)
                        ]
                    )
                    rows.append(
                        {
                            "metric": name,
                            "n=m": n,
                            "epsilon": eps,
                            "delta": d,
                            "dp_mae": float(np.mean(np.abs(noisy - exact))),
                            "estimation_mae": est_err,
                            "population": population[name],
                        }
                    )
    return rows


def timing(N=1_000_000, repeats=5, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, N)
    s = rng.normal(size=N) + y
    out = {}
    for name, fn in METRICS.items():
        for d in (0.0, 1e-9):
            fn(y, s, epsilon=1.0, delta=d, random_state=0)  # warm-up
            times = []
            for k in range(repeats):
                t0 = time.perf_counter()
                fn(y, s, epsilon=1.0, delta=d, random_state=k)
                times.append(time.perf_counter() - t0)
            out[f"{name} delta={d:g}"] = float(np.median(times))
    return out


def _print_accuracy(rows, delta):
    for name in METRICS:
        print(f"\n### {name}: mean absolute error vs epsilon (n = m; delta>0 is {delta:g})\n")
        sizes = sorted({r["n=m"] for r in rows})
        header = "| epsilon | " + " | ".join(f"n={n} DP (d=0) | n={n} DP (d>0)" for n in sizes)
        print(header + " |")
        print("|" + "---|" * (1 + 2 * len(sizes)))
        for eps in EPSILONS:
            cells = []
            for n in sizes:
                for d in (0.0, delta):
                    (r,) = [
                        r
                        for r in rows
                        if r["metric"] == name
                        and r["n=m"] == n
                        and r["epsilon"] == eps
                        and r["delta"] == d
                    ]
                    cells.append(f"{r['dp_mae']:.2e}")
            print(f"| {eps:g} | " + " | ".join(cells) + " |")
        est = [
            next(r["estimation_mae"] for r in rows if r["metric"] == name and r["n=m"] == n)
            for n in sizes
        ]
        pop = next(r["population"] for r in rows if r["metric"] == name)
        print(
            f"\nestimation error (exact vs population {pop:.4f}): "
            + ", ".join(f"n={n}: {e:.2e}" for n, e in zip(sizes, est, strict=True))
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="test sets per cell")
    parser.add_argument("--delta", type=float, default=1e-6, help="delta of the Laplace variant")
    parser.add_argument("--quick", action="store_true", help="20 reps, timing at N=10**5")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    reps = 20 if args.quick else args.reps
    t0 = time.perf_counter()
    rows = accuracy_table(reps, args.delta)
    _print_accuracy(rows, args.delta)
    N = 100_000 if args.quick else 1_000_000
    times = timing(N=N)
    print(f"\n### time per call at N = {N:,} (median of 5)\n")
    for k, v in times.items():
        print(f"- {k}: {v * 1000:.1f} ms")
    print(f"\ntotal benchmark time {time.perf_counter() - t0:.1f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"accuracy": rows, "timing_s": times, "N_timing": N}, fh, indent=1)


if __name__ == "__main__":
    main()
