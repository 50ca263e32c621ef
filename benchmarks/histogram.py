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

Part 3 -- integer columns and within-bin draws (``--only integers``), before and after
one bin per value for small integer domains and uniform draws within bins:

* ``before``: ``representative="midpoint", max_integer_levels=0`` (the previous
  defaults: Lei's groups for every integer column, bin midpoints);
* ``uniform``: ``max_integer_levels=0`` (Lei's groups, values uniform within the bin);
* ``after``: the defaults (one bin per value where the noise budget allows, uniform).

Data: ``clinical7``, a simulated 7-column clinical table (5,000 rows:
integer age 18-90, sex, BMI, systolic blood pressure, smoker, a 10-level integer visit
count 0-9 that depends on the outcome, and the binary outcome); ``clinical13`` (the same
plus diabetes, cholesterol, a 5-level region and three more integer columns: stage 1-5,
medications 0-15, a score 0-30; 20,000 rows); ``diabetes``, scikit-learn's bundled
diabetes data (442 rows, unscaled; age and sex as integers, 58 and 2 levels; label
``target > 140``). No package-shipped table we know of has a 10-level integer column,
hence the simulators. Split 75/25 (fixed); per epsilon and synthesizer the median over
``--seeds`` seeds of: mean 1-way and 2-way total variation between the real training rows
and as many synthetic rows (:func:`skdp.metrics.marginal_total_variation`, 10 bins;
columns with at most 10 values use their values), the 2-way TV of (visit count,
outcome), and TSTR AUC (``HistGradientBoostingClassifier`` trained on synthetic rows,
tested on the real test rows). ``real`` rows: the real training rows themselves (TV
against the real test rows: the sampling-noise floor; AUC: train on real, TRTR).

Recorded (5 seeds; ``OMP_NUM_THREADS=1``, 2 cores shared with other jobs):

| data | eps | synthesizer | integer bins | 1-way TV | 2-way TV | TV(visits, label) | TSTR AUC |
|---|---|---|---|---|---|---|---|
| clinical7 | - | real | age/visits | 0.028 | 0.061 | 0.031 | 0.928 |
| clinical7 | 1 | before | 3/3 | 0.420 | 0.684 | 0.637 | 0.905 |
| clinical7 | 1 | uniform | 3/3 | 0.121 | 0.218 | 0.162 | 0.928 |
| clinical7 | 1 | after | 3/10 | 0.110 | 0.201 | 0.056 | 0.905 |
| clinical7 | 3 | before | 3/3 | 0.421 | 0.686 | 0.637 | 0.896 |
| clinical7 | 3 | uniform | 3/3 | 0.121 | 0.219 | 0.168 | 0.909 |
| clinical7 | 3 | after | 3/10 | 0.104 | 0.195 | 0.028 | 0.926 |
| clinical7 | 10 | before | 3/3 | 0.412 | 0.672 | 0.637 | 0.903 |
| clinical7 | 10 | uniform | 3/3 | 0.120 | 0.218 | 0.171 | 0.920 |
| clinical7 | 10 | after | 3/10 | 0.100 | 0.191 | 0.019 | 0.922 |
| clinical13 | - | real | age/visits/stage/meds/score | 0.013 | 0.031 | 0.022 | 0.989 |
| clinical13 | 1 | before | 2/2/2/2/2 | 0.445 | 0.700 | 0.726 | 0.945 |
| clinical13 | 1 | uniform | 2/2/2/2/2 | 0.139 | 0.237 | 0.201 | 0.957 |
| clinical13 | 1 | after | 2/2/5/2/2 | 0.128 | 0.226 | 0.201 | 0.955 |
| clinical13 | 3 | before | 2/2/2/2/2 | 0.444 | 0.700 | 0.726 | 0.950 |
| clinical13 | 3 | uniform | 2/2/2/2/2 | 0.136 | 0.234 | 0.198 | 0.961 |
| clinical13 | 3 | after | 2/10/5/2/2 | 0.113 | 0.207 | 0.031 | 0.980 |
| clinical13 | 10 | before | 2/2/2/2/2 | 0.442 | 0.698 | 0.726 | 0.955 |
| clinical13 | 10 | uniform | 2/2/2/2/2 | 0.134 | 0.234 | 0.196 | 0.963 |
| clinical13 | 10 | after | 2/10/5/16/31 | 0.093 | 0.168 | 0.054 | 0.985 |
| diabetes | - | real | age/sex | 0.089 | 0.251 | - | 0.781 |
| diabetes | 1 | before | 2/2 | 0.658 | 0.889 | - | 0.720 |
| diabetes | 1 | uniform | 2/2 | 0.299 | 0.498 | - | 0.700 |
| diabetes | 1 | after | 2/2 | 0.301 | 0.501 | - | 0.601 |
| diabetes | 3 | before | 2/2 | 0.656 | 0.889 | - | 0.762 |
| diabetes | 3 | uniform | 2/2 | 0.288 | 0.490 | - | 0.739 |
| diabetes | 3 | after | 2/2 | 0.288 | 0.484 | - | 0.802 |
| diabetes | 10 | before | 2/2 | 0.656 | 0.889 | - | 0.736 |
| diabetes | 10 | uniform | 2/2 | 0.276 | 0.475 | - | 0.729 |
| diabetes | 10 | after | 2/2 | 0.276 | 0.475 | - | 0.729 |

Uniform draws alone bring the 1-way TV from 0.42-0.66 down to 0.12-0.30 (midpoints put
every value of a numeric column on 2-3 points). One bin per value then lowers the 2-way
TV wherever the noise budget admits it (clinical13 at epsilon=1 admits only the 5-level
stage); the (visits, outcome) TV falls from 0.64 (before) to 0.06 / 0.03 / 0.02 at
epsilon 1 / 3 / 10 on clinical7, and a 10-level count is no longer returned as 3 values.
TSTR AUC is unchanged or better, except clinical7 at epsilon=1 (0.905 against 0.928 for
"uniform": noise and the threshold spread over 3.3 times as many cells). On diabetes (331
training rows) no bin changes (age has 63 integers in its bounds, more than 32):
"uniform" and "after" differ only in their seed material (``max_integer_levels`` is one of
the parameters the noise seed is derived from), so their AUC gap at epsilon=1 (0.70 vs
0.60) is seed noise on a small table. Fit + sample take well under a second per run.

Run ``python benchmarks/histogram.py`` (about a minute) or ``--quick``.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd
from _public_tables import integer_column_types
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


# ---------------------------------------------------------- part 3: integer columns
def clinical(n, seed=0, wide=False):
    """Simulated clinical table (see the module docstring); returns df, bounds, cats."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, n)
    bmi = np.clip(rng.normal(24 + 0.05 * (age - 50), 4, n), 15, 50)
    smoker = rng.random(n) < 0.25
    sbp = np.clip(100 + 0.5 * age + 0.8 * (bmi - 25) + 5 * smoker + rng.normal(0, 10, n), 80, 220)
    diab = rng.random(n) < 1 / (1 + np.exp(-(bmi - 32) / 2))
    logit = -4 + 0.04 * (age - 50) + 0.03 * (sbp - 130) + 1.0 * smoker + 1.2 * diab
    outcome = rng.random(n) < 1 / (1 + np.exp(-logit))
    d = {
        "age": age,
        "sex": rng.choice(["F", "M"], n),
        "bmi": bmi,
        "smoker": smoker,
        "sbp": sbp,
        "visits": np.clip(rng.poisson(2 + 5 * outcome), 0, 9),
    }
    bounds = {"age": (18, 90), "bmi": (15.0, 50.0), "sbp": (80.0, 220.0), "visits": (0, 9)}
    cats = {"sex": ["F", "M"]}
    if wide:
        d["diabetes"] = diab
        d["chol"] = np.clip(rng.normal(5 + 0.02 * (age - 50) + 0.3 * diab, 1.0), 2, 10)
        d["region"] = rng.choice(list("NSEWC"), n, p=[0.3, 0.2, 0.2, 0.2, 0.1])
        d["stage"] = np.clip(1 + rng.poisson(0.5 + 1.5 * outcome), 1, 5)
        d["meds"] = np.clip(rng.poisson(2 + 0.05 * (age - 18) + 2 * diab), 0, 15)
        d["score"] = np.clip(np.rint(5 + 0.05 * (sbp - 80) + rng.normal(0, 3, n)), 0, 30)
        d["score"] = d["score"].astype(int)
        bounds.update(chol=(2.0, 10.0), stage=(1, 5), meds=(0, 15), score=(0, 30))
        cats["region"] = list("NSEWC")
    d["label"] = outcome
    return pd.DataFrame(d), bounds, cats


def diabetes_table():
    from sklearn.datasets import load_diabetes

    data = load_diabetes(as_frame=True, scaled=False)
    df = data.data.copy()
    df["age"] = df["age"].round().astype(int)
    df["sex"] = df["sex"].round().astype(int)
    df["label"] = data.target.to_numpy() > 140
    bounds = {
        "age": (18, 80),
        "sex": (1, 2),
        "bmi": (15.0, 45.0),
        "bp": (60.0, 135.0),
        "s1": (95.0, 305.0),
        "s2": (40.0, 245.0),
        "s3": (20.0, 100.0),
        "s4": (2.0, 10.0),
        "s5": (3.0, 6.5),
        "s6": (55.0, 125.0),
    }
    return df, bounds, {}


INTEGER_DATASETS = {
    "clinical7": lambda: clinical(5000),
    "clinical13": lambda: clinical(20000, wide=True),
    "diabetes": diabetes_table,
}
INTEGER_CONFIGS = {
    "before": {"representative": "midpoint", "max_integer_levels": 0},
    "uniform": {"max_integer_levels": 0},
    "after": {},
}


def _integer_metrics(train, syn, test, cats):
    from sklearn.ensemble import HistGradientBoostingClassifier

    from skdp.metrics import marginal_total_variation, tstr_score

    def codes(df):
        out = df.copy()
        for c, levels in cats.items():
            out[c] = out[c].map({v: i for i, v in enumerate(levels)})
        return out.astype(float)

    a, b, t = codes(train), codes(syn[train.columns]), codes(test)
    feats = [c for c in train.columns if c != "label"]
    clf = HistGradientBoostingClassifier(random_state=0)
    auc = tstr_score(clf, b[feats], b["label"].astype(int), t[feats], t["label"].astype(int))
    pair = ["visits", "label"] if "visits" in a else None
    tv_pair = marginal_total_variation(a[pair], b[pair], way=2) if pair else np.nan
    return (
        marginal_total_variation(a, b, way=1),
        marginal_total_variation(a, b, way=2),
        tv_pair,
        auc,
    )


def integer_table(seeds, epsilons=(1.0, 3.0, 10.0)):
    print(f"\n### Integer columns: before / after, median over {seeds} seeds\n")
    print(
        "| data | eps | synthesizer | integer bins | 1-way TV | 2-way TV "
        "| TV(visits, label) | TSTR AUC |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, make in INTEGER_DATASETS.items():
        df, bounds, cats = make()
        cut = int(0.75 * len(df))
        train, test = df.iloc[:cut].reset_index(drop=True), df.iloc[cut:].reset_index(drop=True)
        ints = [c for c in df.columns if df[c].dtype.kind == "i"]
        floor = _integer_metrics(train, test, test, cats)[:3]
        trtr = _integer_metrics(train, train, test, cats)[3]
        cells = [("-" if np.isnan(v) else f"{v:.3f}") for v in (*floor, trtr)]
        print(f"| {name} | - | real | {'/'.join(ints)} | {' | '.join(cells)} |")
        for eps in epsilons:
            for label, kw in INTEGER_CONFIGS.items():
                res = []
                for seed in range(seeds):
                    s = DPHistogramSynthesizer(
                        epsilon=eps,
                        bounds=bounds,
                        categories=cats,
                        column_types=integer_column_types(train, bounds),
                        random_state=seed,
                        **kw,
                    ).fit(train)
                    fake = s.sample(len(train), random_state=seed)
                    res.append(_integer_metrics(train, fake, test, cats))
                r = np.median(np.array(res, dtype=float), axis=0)  # nan: no visits column
                bins = "/".join(str(s.n_bins_[c]) for c in ints)
                cells = [("-" if np.isnan(v) else f"{v:.3f}") for v in r]
                print(f"| {name} | {eps:g} | {label} | {bins} | {' | '.join(cells)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="3 seeds, sizes up to 10^5")
    ap.add_argument("--only", choices=["utility", "speed", "integers"], help="run one part")
    args = ap.parse_args()
    seeds = 3 if args.quick else args.seeds
    sizes = (10**4, 10**5) if args.quick else (10**4, 10**5, 10**6)
    if args.only in (None, "utility"):
        utility_table(seeds)
    if args.only in (None, "integers"):
        integer_table(min(seeds, 5))
    if args.only in (None, "speed"):
        speed_table(sizes)


if __name__ == "__main__":
    main()
