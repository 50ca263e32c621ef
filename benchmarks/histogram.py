"""Benchmark of DPHistogramSynthesizer: speed and utility of the synthetic data.

Part 1 -- speed. Fit + sample time for n = 10^4 ... 10^6 rows of a simulated mixed table
(4 continuous columns, 3 categorical columns with 5 levels, 1 binary column), sampling
n synthetic rows: with the default Lei bin count (a dense histogram) and with 50 bins per
numeric column (1.6e9 cells: the exact sparse sampler).

Part 2 -- utility, on scikit-learn's bundled breast-cancer data (569 rows; five
features and the diagnosis as a categorical column; 70/30 train/test split per seed).
Bounds are declared from the published ranges of the data set's documentation
(``load_breast_cancer().DESCR``), rounded outward: in a real deployment they would come
from domain knowledge. For epsilon in {0.1, 1, 10} and ``--seeds`` seeds we report

* the mean total variation distance (TVD) of all 1-way and 2-way marginals between
  the real training rows and as many synthetic rows (numeric columns cut into 10
  equal-width bins within the bounds for this evaluation), next to the TVD between
  the real training and real test rows (the sampling-noise floor);
* TSTR: the test accuracy of a logistic regression trained on the synthetic rows and
  tested on the real test rows, next to train-on-real (TRTR) and the majority class.

Run ``python benchmarks/histogram.py`` (about a minute) or ``--quick``.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp.synthesis import DPHistogramSynthesizer

EPSILONS = (0.1, 1.0, 10.0)
FEATURES = {
    "mean radius": (6.0, 29.0),
    "mean texture": (9.0, 40.0),
    "mean smoothness": (0.05, 0.17),
    "mean concave points": (0.0, 0.21),
    "worst area": (180.0, 4300.0),
}
TARGET = "diagnosis"
CLASSES = ["malignant", "benign"]


def simulated_table(n, rng):
    z = rng.normal(size=(n, 4))
    df = pd.DataFrame({f"x{j}": np.clip(z[:, j] + 0.5 * z[:, 0], -4, 4) for j in range(4)})
    for j in range(3):
        df[f"c{j}"] = rng.choice(list("abcde"), size=n)
    df["flag"] = rng.random(n) < 0.2
    bounds = {f"x{j}": (-4.0, 4.0) for j in range(4)}
    cats = {f"c{j}": list("abcde") for j in range(3)}
    return df, bounds, cats


def speed_table(sizes):
    print("\n### Fit + sample time (n synthetic rows), simulated 8-column table\n")
    print("| n | bins per numeric | cells | sparse | fit (s) | sample n (s) |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for n in sizes:
        df, bounds, cats = simulated_table(n, rng)
        for n_bins in ("auto", 50):
            s = DPHistogramSynthesizer(
                epsilon=1.0, bounds=bounds, categories=cats, n_bins=n_bins, random_state=0
            )
            t = time.perf_counter()
            s.fit(df)
            t_fit = time.perf_counter() - t
            t = time.perf_counter()
            out = s.sample(n)
            t_sample = time.perf_counter() - t
            assert len(out) == n
            h = s.histograms_[0]
            cells = int(np.prod(h["shape"]))
            print(
                f"| {n:.0e} | {s.n_bins_['x0']} | {cells:.2e} | {h['sparse']} "
                f"| {t_fit:.2f} | {t_sample:.2f} |"
            )


def breast_cancer_frame():
    data = load_breast_cancer(as_frame=True)
    df = data.frame[list(FEATURES)].copy()
    df[TARGET] = pd.Categorical.from_codes(data.target, categories=CLASSES)
    return df


def _discretise(df):
    out = {}
    for c, (lo, hi) in FEATURES.items():
        out[c] = np.clip(np.floor((df[c].to_numpy() - lo) / (hi - lo) * 10), 0, 9).astype(int)
    out[TARGET] = (df[TARGET].astype(str) == CLASSES[1]).astype(int).to_numpy()
    return out


def _tvd(a, b, cols):
    ka = pd.Series(list(zip(*(a[c] for c in cols), strict=True))).value_counts(normalize=True)
    kb = pd.Series(list(zip(*(b[c] for c in cols), strict=True))).value_counts(normalize=True)
    return 0.5 * ka.sub(kb, fill_value=0.0).abs().sum()


def marginal_tvds(real, synth):
    a, b = _discretise(real), _discretise(synth)
    cols = list(FEATURES) + [TARGET]
    one = np.mean([_tvd(a, b, [c]) for c in cols])
    two = np.mean([_tvd(a, b, list(p)) for p in itertools.combinations(cols, 2)])
    return one, two


def accuracy(train, test):
    if train[TARGET].nunique() < 2:
        majority = train[TARGET].iloc[0] if len(train) else CLASSES[1]
        return float(np.mean(test[TARGET].astype(str) == str(majority)))
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    clf.fit(train[list(FEATURES)], train[TARGET].astype(str))
    return float(np.mean(clf.predict(test[list(FEATURES)]) == test[TARGET].astype(str)))


def utility_table(seeds):
    df = breast_cancer_frame()
    rows = {}
    for seed in range(seeds):
        train, test = train_test_split(df, test_size=0.3, random_state=seed, stratify=df[TARGET])
        train, test = train.reset_index(drop=True), test.reset_index(drop=True)
        rows.setdefault(("real train vs real test", "-", "-"), []).append(
            (*marginal_tvds(train, test), accuracy(train, test))
        )
        maj = float(np.mean(test[TARGET].astype(str) == train[TARGET].mode()[0]))
        rows.setdefault(("majority class", "-", "-"), []).append((np.nan, np.nan, maj))
        for eps, n_bins in itertools.product(EPSILONS, ("auto", 4)):
            s = DPHistogramSynthesizer(
                epsilon=eps,
                bounds=FEATURES,
                categories={TARGET: list(CLASSES)},  # public; a category dtype is not
                n_bins=n_bins,
                representative="uniform",
                random_state=seed,
            ).fit(train)
            fake = s.sample(len(train))
            label = f"DPHistogram bins={s.n_bins_['mean radius']}"
            rows.setdefault((label, eps, n_bins), []).append(
                (*marginal_tvds(train, fake), accuracy(fake, test))
            )
    print(f"\n### Breast cancer (train n=398): utility, mean (sd) over {seeds} seeds\n")
    print("| synthetic data | epsilon | TVD 1-way | TVD 2-way | accuracy on real test (TSTR) |")
    print("|---|---|---|---|---|")
    for (label, eps, _), vals in rows.items():
        v = np.array(vals, dtype=float)
        cells = []
        for j in range(3):
            if np.all(np.isnan(v[:, j])):
                cells.append("-")
            else:
                cells.append(f"{np.nanmean(v[:, j]):.3f} ({np.nanstd(v[:, j]):.3f})")
        print(f"| {label} | {eps} | {' | '.join(cells)} |")
    print("\n('real train vs real test' accuracy = train on real, test on real (TRTR).)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="3 seeds, sizes up to 10^5")
    ap.add_argument("--only", choices=["utility", "speed"], help="run one part")
    args = ap.parse_args()
    seeds = 3 if args.quick else args.seeds
    sizes = (10**4, 10**5) if args.quick else (10**4, 10**5, 10**6)
    if args.only != "speed":
        utility_table(seeds)
    if args.only != "utility":
        speed_table(sizes)


if __name__ == "__main__":
    main()
