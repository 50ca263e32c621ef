"""Benchmark: DPMarginalSynthesizer (MST) against DPHistogramSynthesizer.

Data (all shipped with a package or simulated; declared public bounds and categories
for every synthesizer, so no budget goes to bounds):

* ``breast_cancer``: scikit-learn's bundled Wisconsin data (569 rows), the 10 "mean"
  features and the diagnosis; bounds from the published ranges in the data set's
  ``DESCR``, rounded outward.
* ``diabetes``: scikit-learn's bundled diabetes data (442 rows, unscaled), 10 features
  (age and sex as integers) and the label ``target > 140``.
* ``clinical``: a simulated clinical table (5,000 rows, 10 columns: integer age, sex,
  BMI, smoker, blood pressure, diabetes, cholesterol, a 5-level region, a 10-level
  integer visit count and an outcome) with strong pairwise dependences (outcome and
  visit count, BMI and diabetes, age and blood pressure).
* ``repeated``: :func:`skdp.datasets.make_nonlinear_repeated_measures` (6,000 subjects;
  covariates w2..w4, measurements x1..x5, label ``w1 > 0.5``).
* ``fair``: statsmodels' Fair (1978) survey of 6,366 married women, label
  ``affairs > 0``; bounds and integer scales from the codebook (see :func:`fair`);
  skipped with a note when statsmodels is not installed (not a dependency of skdp).

Each data set is split 75/25 into train/test (fixed split). For epsilon in {1, 10}
(``delta = 1e-5`` for the marginal synthesizer; the histogram is pure epsilon-DP) and
``--seeds`` seeds we fit on the training rows, sample as many rows, and report the
median over seeds of: mean 1-way and 2-way total variation between the real training
rows and the synthetic rows (:func:`skdp.metrics.marginal_total_variation`, 10 bins;
also averaged over the pairs that contain the label), TSTR AUC (scikit-learn's
``HistGradientBoostingClassifier`` trained on the synthetic rows, tested on the real
test rows) and the fit time. The ``real test rows / TRTR`` line gives the total
variation between the real training and test rows (the floor that sampling alone
leaves) and the train-on-real AUC. Both synthesizers run at their defaults.

smartnoise-synth's MST is not in this table: it needs its own virtual environment
(pinned dependencies that conflict with skdp's; see ``benchmarks/synthesizers.py``),
and none is installed on the machine where this was run.

Recorded (3 seeds, medians; skdp at commit 8a40f21, the histogram with per-value
integer bins and uniform within-bin values as of ae38593; 2 CPU cores shared with
other jobs, load average 3-5 during the run, so fit times are rough):

| dataset | method | epsilon | 1-way TV | 2-way TV | label 2-way TV | TSTR AUC | fit (s) |
|---|---|---|---|---|---|---|---|
| breast_cancer | real test rows / TRTR | - | 0.075 | 0.194 | 0.106 | 0.984 | 0.00 |
| breast_cancer | marginal | 1.0 | 0.122 | 0.300 | 0.210 | 0.945 | 0.10 |
| breast_cancer | histogram | 1.0 | 0.325 | 0.555 | 0.449 | 0.786 | 0.04 |
| breast_cancer | marginal | 10.0 | 0.064 | 0.184 | 0.123 | 0.960 | 0.11 |
| breast_cancer | histogram | 10.0 | 0.307 | 0.533 | 0.427 | 0.767 | 0.02 |
| diabetes | real test rows / TRTR | - | 0.101 | 0.262 | 0.155 | 0.758 | 0.00 |
| diabetes | marginal | 1.0 | 0.148 | 0.323 | 0.212 | 0.656 | 0.06 |
| diabetes | histogram | 1.0 | 0.293 | 0.501 | 0.351 | 0.726 | 0.01 |
| diabetes | marginal | 10.0 | 0.074 | 0.218 | 0.134 | 0.640 | 0.07 |
| diabetes | histogram | 10.0 | 0.272 | 0.462 | 0.313 | 0.751 | 0.03 |
| clinical | real test rows / TRTR | - | 0.023 | 0.055 | 0.031 | 0.946 | 0.00 |
| clinical | marginal | 1.0 | 0.017 | 0.048 | 0.033 | 0.849 | 0.08 |
| clinical | histogram | 1.0 | 0.108 | 0.201 | 0.130 | 0.854 | 0.05 |
| clinical | marginal | 10.0 | 0.011 | 0.035 | 0.023 | 0.900 | 0.08 |
| clinical | histogram | 10.0 | 0.096 | 0.185 | 0.111 | 0.941 | 0.03 |
| repeated | real test rows / TRTR | - | 0.028 | 0.077 | 0.041 | 0.953 | 0.00 |
| repeated | marginal | 1.0 | 0.023 | 0.123 | 0.076 | 0.826 | 0.06 |
| repeated | histogram | 1.0 | 0.277 | 0.483 | 0.319 | 0.854 | 0.01 |
| repeated | marginal | 10.0 | 0.016 | 0.098 | 0.060 | 0.845 | 0.06 |
| repeated | histogram | 10.0 | 0.276 | 0.488 | 0.320 | 0.869 | 0.01 |

The marginal synthesizer's total variation is lower everywhere; at epsilon = 10 its
2-way TV to the training rows is below the TV between the training and the test rows
on three tables (1.3x on ``repeated``). Its TSTR
AUC is higher on ``breast_cancer`` and lower on the three others: a tree links the
label directly to one or two columns, while the label of ``clinical``, ``diabetes``
and ``repeated`` depends on several columns jointly, which the histogram's full
(coarse) joint keeps. Adaptive higher-order marginals (AIM) are the remedy.

Usage::

    python benchmarks/marginal.py             # the table (a few minutes)
    python benchmarks/marginal.py --seeds 1   # quicker
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import pandas as pd
from _public_tables import (
    FAIR_BOUNDS,
    FAIR_INTEGER,
    RANDHIE_BOUNDS,
    integer_column_types,
    statsmodels_table,
)

EPSILONS = (1.0, 10.0)
DELTA = 1e-5


# ------------------------------------------------------------------------ data
def split(df):
    """The panel's fixed 75/25 train/test split (the same rows for every method)."""
    perm = np.random.default_rng(0).permutation(len(df))
    cut = int(0.75 * len(df))
    return df.iloc[perm[:cut]].reset_index(drop=True), df.iloc[perm[cut:]].reset_index(drop=True)


def breast_cancer():
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    X = data.data.iloc[:, :10].copy()
    X.columns = [c.replace("mean ", "").replace(" ", "_") for c in X.columns]
    bounds = {
        "radius": (5.0, 30.0),
        "texture": (5.0, 45.0),
        "perimeter": (40.0, 200.0),
        "area": (100.0, 2600.0),
        "smoothness": (0.04, 0.18),
        "compactness": (0.0, 0.4),
        "concavity": (0.0, 0.5),
        "concave_points": (0.0, 0.25),
        "symmetry": (0.1, 0.35),
        "fractal_dimension": (0.04, 0.1),
    }
    X["label"] = data.target.to_numpy() == 1
    return X, bounds, {}


def diabetes():
    from sklearn.datasets import load_diabetes

    data = load_diabetes(as_frame=True, scaled=False)
    X = data.data.copy()
    X["age"] = X["age"].round().astype(int)
    X["sex"] = X["sex"].round().astype(int)
    X["label"] = data.target.to_numpy() > 140
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
    return X, bounds, {}


def clinical(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, n)
    bmi = np.clip(rng.normal(24 + 0.05 * (age - 50), 4, n), 15, 50)
    smoker = rng.random(n) < 0.25
    sbp = np.clip(100 + 0.5 * age + 0.8 * (bmi - 25) + 5 * smoker + rng.normal(0, 10, n), 80, 220)
    diab = rng.random(n) < 1 / (1 + np.exp(-(bmi - 32) / 2))
    logit = -4 + 0.04 * (age - 50) + 0.03 * (sbp - 130) + 1.0 * smoker + 1.2 * diab
    outcome = rng.random(n) < 1 / (1 + np.exp(-logit))
    df = pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["F", "M"], n),
            "bmi": bmi,
            "smoker": smoker,
            "sbp": sbp,
            "diabetes": diab,
            "chol": np.clip(rng.normal(5 + 0.02 * (age - 50) + 0.3 * diab, 1.0), 2, 10),
            "region": rng.choice(list("NSEWC"), n, p=[0.3, 0.2, 0.2, 0.2, 0.1]),
            "visits": np.clip(rng.poisson(2 + 5 * outcome), 0, 9),
            "label": outcome,
        }
    )
    bounds = {
        "age": (18, 90),
        "bmi": (15.0, 50.0),
        "sbp": (80.0, 220.0),
        "chol": (2.0, 10.0),
        "visits": (0, 9),
    }
    return df, bounds, {"sex": ["F", "M"], "region": list("NSEWC")}


def repeated():
    from skdp.datasets import make_nonlinear_repeated_measures

    M = make_nonlinear_repeated_measures(6000, random_state=0)
    names = ["w1", "w2", "w3", "w4", "x1", "x2", "x3", "x4", "x5"]
    df = pd.DataFrame(M, columns=names)
    df["label"] = df["w1"] > 0.5
    df = df.drop(columns="w1")
    bounds = {"w2": (0.0, 3.0), "w3": (0.0, 0.5), "w4": (0.0, 2.0)}
    bounds.update({f"x{k}": (0.0, 6.0) for k in range(1, 6)})
    return df, bounds, {}


def fair():
    """statsmodels' ``fair`` data (Fair 1978; 6,366 married women), label ``affairs > 0``.

    Bounds and types are the shared declaration of ``benchmarks/_public_tables.py``
    (codebook scales as integers; generic declared ranges for age, years married and
    children, which the codebook does not bound), never from the data. ``None`` (the
    table is skipped) without statsmodels, which is not a dependency of skdp.
    """
    raw = statsmodels_table("fair")
    if raw is None:
        return None
    df = raw.drop(columns="affairs").copy()
    for c in FAIR_INTEGER:
        df[c] = df[c].round().astype(int)
    df["label"] = raw["affairs"].to_numpy() > 0
    return df, dict(FAIR_BOUNDS), {}


def randhie():
    """statsmodels' ``randhie`` data (RAND Health Insurance Experiment; 20,190
    person-years), label ``mdvis > 0`` (any outpatient visit). Bounds are the shared
    declaration of ``benchmarks/_public_tables.py`` (codebook ranges and declared caps;
    the four 0/1 indicators as integers), never from the data. ``None`` without
    statsmodels.
    """
    raw = statsmodels_table("randhie")
    if raw is None:
        return None
    df = raw.drop(columns="mdvis").copy()
    for c in ("idp", "hlthg", "hlthf", "hlthp"):  # 0/1 indicators (physlm is a fraction)
        df[c] = df[c].round().astype(int)
    df["label"] = raw["mdvis"].to_numpy() > 0
    return df, dict(RANDHIE_BOUNDS), {}


DATASETS = {
    "breast_cancer": breast_cancer,
    "diabetes": diabetes,
    "clinical": clinical,
    "repeated": repeated,
    "fair": fair,
    "randhie": randhie,
}


# ------------------------------------------------------------------ synthesizers
def run_marginal(train, eps, bounds, cats, seed):
    from skdp.synthesis import DPMarginalSynthesizer

    est = DPMarginalSynthesizer(  # MST, as recorded above (the default is now AIM)
        epsilon=eps,
        delta=DELTA,
        bounds=bounds,
        categories=cats,
        column_types=integer_column_types(train, bounds),
        selection="mst",
        random_state=seed,
    )
    return est.fit(train)


def run_histogram(train, eps, bounds, cats, seed):
    from skdp.synthesis import DPHistogramSynthesizer

    est = DPHistogramSynthesizer(
        epsilon=eps,
        bounds=bounds,
        categories=cats,
        column_types=integer_column_types(train, bounds),
        random_state=seed,
    )
    return est.fit(train)


SYNTHS = {"marginal": run_marginal, "histogram": run_histogram}


# ------------------------------------------------------------------ evaluation
def _codes(df, cats):
    out = df.copy()
    for c, levels in cats.items():
        out[c] = out[c].map({v: i for i, v in enumerate(levels)})
    return out.astype(float)


def evaluate(train, syn, test, cats):
    from sklearn.ensemble import HistGradientBoostingClassifier

    from skdp.metrics import marginal_total_variation, tstr_score

    a, b, t = _codes(train, cats), _codes(syn[train.columns], cats), _codes(test, cats)
    feats = [c for c in train.columns if c != "label"]
    clf = HistGradientBoostingClassifier(random_state=0)
    auc = tstr_score(clf, b[feats], b["label"].astype(int), t[feats], t["label"].astype(int))
    label_tv = [marginal_total_variation(a[[c, "label"]], b[[c, "label"]], way=2) for c in feats]
    return {
        "tv1": marginal_total_variation(a, b, way=1),
        "tv2": marginal_total_variation(a, b, way=2),
        "tv2_label": float(np.mean(label_tv)),
        "auc": auc,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for ds in args.datasets.split(","):
        loaded = DATASETS[ds]()
        if loaded is None:
            print(f"{ds}: skipped (statsmodels is not installed)")
            continue
        df, bounds, cats = loaded
        train, test = split(df)
        # the real rows: TV between the training and the test rows (the sampling floor)
        # and train-on-real AUC
        floor = evaluate(train, test, test, cats)
        floor["auc"] = evaluate(train, train, test, cats)["auc"]
        rows.append(dict(dataset=ds, method="real test rows / TRTR", epsilon="-", **floor))
        rows[-1]["fit_s"] = 0.0
        for eps in EPSILONS:
            for name, run in SYNTHS.items():
                res = []
                for seed in range(args.seeds):
                    t0 = time.perf_counter()
                    try:
                        est = run(train, eps, bounds, cats, seed)
                        fit_s = time.perf_counter() - t0
                        syn = est.sample(len(train), random_state=seed)
                        res.append({**evaluate(train, syn, test, cats), "fit_s": fit_s})
                    except Exception as exc:  # report, keep going
                        print(f"{ds} {name} eps={eps} seed={seed}: {type(exc).__name__}: {exc}")
                        nan = math.nan
                        res.append(dict(tv1=nan, tv2=nan, tv2_label=nan, auc=nan, fit_s=nan))
                med = {k: float(np.median([r[k] for r in res])) for k in res[0]}
                rows.append(dict(dataset=ds, method=name, epsilon=eps, **med))
                print(rows[-1], flush=True)
    print()
    print(
        "| dataset | method | epsilon | 1-way TV | 2-way TV | label 2-way TV | TSTR AUC | fit (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['method']} | {r['epsilon']} | {r['tv1']:.3f} | "
            f"{r['tv2']:.3f} | {r['tv2_label']:.3f} | {r['auc']:.3f} | {r['fit_s']:.2f} |"
        )
    return rows


if __name__ == "__main__":
    main()
