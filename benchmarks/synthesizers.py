"""Benchmark every skdp synthesizer on the same data at epsilon in {1, 10, inf}.

Synthesizers: DPHistogramSynthesizer, DPFlowDensity (sampling), DPGANSynthesizer (MLP
WGAN; and on the SPRINT-like data the conv1d AC-GAN of paper 002). Optionally
smartnoise-synth's DP-CTGAN and MST at the same epsilon (if a python with ``snsynth`` is
given with ``--smartnoise-python``; it is run in a subprocess because its pinned
dependencies, e.g. opacus 0.14, conflict with skdp's environment).

Data (all public or simulated):

* ``breast_cancer``: scikit-learn's bundled Wisconsin data, the 10 "mean" features plus the
  diagnosis as a binary column; bounds are *not* declared, so every synthesizer spends
  0.1 epsilon on private bounds.
* ``sprint_like``: a simulated SPRINT-like longitudinal table (spec ``dp_gan.md`` §4.2):
  6,502 participants (6,000 train / 502 test), two arms (standard: SBP target < 140;
  intensive: < 120), systolic and diastolic blood pressure and the number of medications
  at 12 visits (36 integer columns, ordered SBP_1..12, DBP_1..12, MEDS_1..12 so that
  ``feature_shape=(3, 12)`` gives 3 channels x 12 visits), declared clinical bounds.

Metrics (non-private evaluation, :mod:`skdp.metrics`): TSTR AUC (logistic regression
trained on synthetic rows, tested on the real held-out rows; TRTR in the ``real`` row),
mean 1-way marginal total variation, mean absolute correlation-matrix difference, fit
time. One table, printed as markdown.

Recorded results (seed 0; 2-core CPU shared with other jobs, so fit times are inflated
and only roughly comparable; GAN rows with the AC-GAN settings of ``run_gan``;
histogram/flow/GAN and smartnoise were run as separate invocations of this script,
smartnoise-synth 1.0.8 in its own virtual environment). "error" = the smartnoise
preprocessor could not find bounds privately at that budget on 400 rows (skdp's
estimators spend 0.1 epsilon on private bounds there too; on ``sprint_like`` everyone
gets the declared bounds). On breast_cancer at epsilon = 1 the private bounds estimate
(0.01 epsilon per column on 400 rows) is poor and the histogram/flow TSTR AUC collapses
(below 0.5: the clipped synthetic features relate to the label the wrong way).

| dataset | synthesizer | epsilon | TSTR AUC | 1-way TV | corr. dist. | fit (s) | epsilon spent |
|---|---|---|---|---|---|---|---|
| breast_cancer | histogram | 1.0 | 0.061 | 0.771 | 0.510 | 0.2 | 1 |
| breast_cancer | histogram | 10.0 | 0.950 | 0.677 | 0.469 | 0.1 | 10 |
| breast_cancer | histogram | inf | 0.975 | 0.264 | 0.304 | 0.0 | inf |
| breast_cancer | flow | 1.0 | 0.062 | 0.663 | 0.489 | 27.6 | 1 |
| breast_cancer | flow | 10.0 | 0.961 | 0.698 | 0.723 | 22.8 | 10 |
| breast_cancer | flow | inf | 0.982 | 0.071 | 0.035 | 20.5 | inf |
| breast_cancer | gan_mlp | 1.0 | 0.939 | 0.876 | 0.988 | 31.1 | 0.999 |
| breast_cancer | gan_mlp | 10.0 | 0.959 | 0.658 | 0.955 | 69.0 | 9.99 |
| breast_cancer | gan_mlp | inf | 0.972 | 0.421 | 0.431 | 53.3 | inf |
| breast_cancer | smartnoise_mst | 1.0 | nan | nan | nan | 4.8 | error: CalledProcessError |
| breast_cancer | smartnoise_mst | 10.0 | 0.940 | 0.279 | 0.236 | 41.5 | 10 (claimed) |
| breast_cancer | smartnoise_dpctgan | 1.0 | nan | nan | nan | 4.0 | error: CalledProcessError |
| breast_cancer | smartnoise_dpctgan | 10.0 | 0.470 | 0.659 | 0.444 | 12.2 | 10 (claimed) |
| sprint_like | histogram | 1.0 | 0.804 | 0.104 | 0.324 | 0.3 | 1 |
| sprint_like | histogram | 10.0 | 0.830 | 0.097 | 0.321 | 0.2 | 10 |
| sprint_like | histogram | inf | 0.834 | 0.097 | 0.322 | 0.2 | inf |
| sprint_like | flow | 1.0 | 0.923 | 0.129 | 0.217 | 31.0 | 1 |
| sprint_like | flow | 10.0 | 0.965 | 0.095 | 0.101 | 32.4 | 10 |
| sprint_like | flow | inf | 0.980 | 0.030 | 0.027 | 22.4 | inf |
| sprint_like | gan_mlp | 1.0 | 0.789 | 0.825 | 0.520 | 155.2 | 1 |
| sprint_like | gan_mlp | 10.0 | 0.710 | 0.596 | 0.612 | 158.5 | 9.98 |
| sprint_like | gan_mlp | inf | 0.856 | 0.267 | 0.457 | 105.4 | inf |
| sprint_like | gan_conv1d_acgan | 1.0 | 0.622 | 0.674 | 0.401 | 554.9 | 0.999 |
| sprint_like | gan_conv1d_acgan | 10.0 | 0.694 | 0.597 | 0.492 | 527.1 | 9.98 |
| sprint_like | gan_conv1d_acgan | inf | 0.858 | 0.172 | 0.199 | 294.9 | inf |
| sprint_like | smartnoise_mst | 1.0 | 0.792 | 0.054 | 0.371 | 354.2 | 1 (claimed) |
| sprint_like | smartnoise_mst | 10.0 | 0.759 | 0.056 | 0.489 | 364.6 | 10 (claimed) |
| sprint_like | smartnoise_dpctgan | 1.0 | 0.402 | 0.687 | 0.345 | 399.6 | 1 (claimed) |
| sprint_like | smartnoise_dpctgan | 10.0 | 0.888 | 0.523 | 0.373 | 957.5 | 10 (claimed) |

Usage::

    python benchmarks/synthesizers.py            # the full table (minutes)
    python benchmarks/synthesizers.py --quick    # tiny settings (smoke run)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

EPSILONS = (1.0, 10.0, math.inf)
DELTA = 1e-5


# ------------------------------------------------------------------------ data
def sprint_like(n=6502, seed=0):
    """Simulated SPRINT-like trajectories: 3 x 12 integer grid + treatment arm.

    Built from paper 002's description: visits RZ, 1M, 2M, 3M, 6M, ..., 27M; the intensive
    arm's mean SBP drifts from ~140 to ~120, the standard arm's to ~135; DBP follows SBP;
    medications rise faster in the intensive arm. Per-participant random effects and AR(1)
    visit noise give the within-person correlation structure.
    """
    rng = np.random.default_rng(seed)
    months = np.array([0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27], dtype=float)
    arm = rng.integers(0, 2, size=n)  # 1 = intensive
    target = np.where(arm == 1, 121.0, 135.0)
    base = rng.normal(140.0, 15.0, size=n)
    speed = 1.0 - np.exp(-months[None, :] / 3.0)
    mean_sbp = base[:, None] + (target[:, None] - base[:, None]) * speed
    person = rng.normal(0, 6.0, size=(n, 1))
    ar = np.zeros((n, 12))
    for t in range(12):
        ar[:, t] = (0.6 * ar[:, t - 1] if t else 0.0) + rng.normal(0, 7.0, size=n)
    sbp = mean_sbp + person + ar
    dbp = 0.5 * sbp + 8.0 + rng.normal(0, 5.0, size=(n, 12)) + 0.5 * person
    base_meds = rng.poisson(1.8, size=n)
    extra = np.where(arm == 1, 1.2, 0.4)[:, None] * speed
    meds = base_meds[:, None] + rng.poisson(np.maximum(extra, 0.0))
    sbp = np.clip(np.rint(sbp), 80, 220).astype(int)
    dbp = np.clip(np.rint(dbp), 40, 130).astype(int)
    meds = np.clip(meds, 0, 6).astype(int)
    cols = {}
    for name, M in (("SBP", sbp), ("DBP", dbp), ("MEDS", meds)):
        for t in range(12):
            cols[f"{name}_{t + 1}"] = M[:, t]
    df = pd.DataFrame(cols)
    bounds = {
        c: ((80, 220) if c.startswith("SBP") else (40, 130) if c.startswith("DBP") else (0, 6))
        for c in df.columns
    }
    return df, arm, bounds


def load(name):
    """Return (train table incl. label column, test X, test y, label, bounds, categories)."""
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        data = load_breast_cancer(as_frame=True)
        X = data.data.iloc[:, :10].copy()
        X.columns = [c.replace(" ", "_") for c in X.columns]
        y = data.target.to_numpy()
        rng = np.random.default_rng(0)
        idx = rng.permutation(len(X))
        tr, te = idx[:400], idx[400:]
        bounds = None
    else:
        X, y, bounds = sprint_like()
        tr, te = np.arange(6000), np.arange(6000, len(X))
    train = X.iloc[tr].reset_index(drop=True)
    train["label"] = y[tr].astype(bool)
    return train, X.iloc[te].reset_index(drop=True), y[te], bounds


# ------------------------------------------------------------------ synthesizers
def run_histogram(train, eps, bounds, seed, quick):
    from skdp.synthesis import DPHistogramSynthesizer

    projections = None
    if "SBP_1" in train.columns:
        # a public, data-independent choice: one histogram per visit (SBP, DBP, MEDS), the
        # label joined to the last visit (36 columns jointly would be 2^36+ cells)
        projections = [[f"SBP_{t}", f"DBP_{t}", f"MEDS_{t}"] for t in range(1, 12)]
        projections.append(["SBP_12", "DBP_12", "MEDS_12", "label"])
    est = DPHistogramSynthesizer(
        epsilon=eps,
        bounds=bounds,
        representative="uniform",
        projections=projections,
        random_state=seed,
    )
    est.fit(train)
    return est, est.sample(len(train))


def run_flow(train, eps, bounds, seed, quick):
    from skdp.density import DPFlowDensity

    est = DPFlowDensity(
        epsilon=eps,
        bounds=bounds,
        n_layers=2 if quick else 4,
        hidden_size=None if not quick else 48,
        n_iter=30 if quick else 600,
        batch_size=128,
        device="cpu",
        random_state=seed,
    )
    est.fit(train)
    return est, est.sample(len(train))


def run_gan(train, eps, bounds, seed, quick, *, conv=False):
    from skdp.synthesis import DPGANSynthesizer

    X = train.drop(columns="label")
    y = train["label"].to_numpy()
    # the AC-GAN of paper 002: non-saturating GAN loss, one critic step per generator step
    # (a WGAN critic with weight clipping learned the label relation poorly in our runs)
    small = len(train) < 1000
    batch = 64 if small else 128
    epochs = 150 if small else (20 if conv else 30)  # expected passes over the data
    kw = dict(
        epsilon=eps,
        bounds=bounds,
        conditional="acgan",
        classes=[False, True],
        loss="gan",
        n_critic=1,
        latent_dim=32,
        learning_rate=2e-4,
        batch_size=batch,
        n_iter=10 if quick else math.ceil(epochs * len(train) / batch),
        device="cpu",
        random_state=seed,
    )
    if conv:
        kw.update(architecture="conv1d", feature_shape=(3, 12), hidden_size=8)
    else:
        kw.update(hidden_size=64)
    est = DPGANSynthesizer(**kw).fit(X, y)
    Xs, ys = est.sample_labeled(len(train))
    Xs["label"] = ys
    return est, Xs


SYNTHS = {
    "histogram": run_histogram,
    "flow": run_flow,
    "gan_mlp": run_gan,
    "gan_conv1d_acgan": lambda *a: run_gan(*a, conv=True),
}


# ------------------------------------------------------------------ smartnoise
SN_SCRIPT = r"""
import json, sys, warnings
import pandas as pd
warnings.filterwarnings("ignore")
from snsynth import Synthesizer
from snsynth.transform import BinTransformer, MinMaxTransformer
cfg = json.loads(sys.argv[1])
df = pd.read_csv(cfg["train"])
kw = {}
if cfg["name"] == "dpctgan":
    kw = dict(epochs=cfg["epochs"], batch_size=cfg["batch_size"])
constraints, pre_eps = None, 0.1 * cfg["epsilon"]
if cfg["bounds"]:  # declared public bounds, as skdp's estimators get them
    make = (lambda lo, hi: BinTransformer(bins=10, lower=lo, upper=hi)) if cfg["name"] == "mst" \
        else (lambda lo, hi: MinMaxTransformer(lower=lo, upper=hi, negative=True))
    constraints = {c: make(*cfg["bounds"][c]) for c in cfg["continuous"]}
    pre_eps = 0.0
synth = Synthesizer.create(cfg["name"], epsilon=cfg["epsilon"], **kw)
synth.fit(df, transformer=constraints, preprocessor_eps=pre_eps,
          categorical_columns=cfg["categorical"], continuous_columns=cfg["continuous"])
synth.sample(len(df)).to_csv(cfg["out"], index=False)
"""


def run_smartnoise(python, name, train, eps, quick, bounds=None):
    if math.isinf(eps):
        raise RuntimeError("smartnoise synthesizers need a finite epsilon")
    with tempfile.TemporaryDirectory() as d:
        df = train.copy()
        df["label"] = df["label"].astype(int)
        path, out = os.path.join(d, "train.csv"), os.path.join(d, "out.csv")
        df.to_csv(path, index=False)
        cfg = dict(
            name=name,
            epsilon=eps,
            train=path,
            out=out,
            epochs=2 if quick else 50,
            batch_size=100 if len(df) < 1000 else 500,
            bounds=bounds,
            categorical=["label"],
            continuous=[c for c in df.columns if c != "label"],
        )
        subprocess.run(
            [python, "-c", SN_SCRIPT, json.dumps(cfg)],
            check=True,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        syn = pd.read_csv(out)
    syn["label"] = syn["label"].astype(bool)
    return syn


# ------------------------------------------------------------------ evaluation
def evaluate(train, syn, X_test, y_test):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skdp.metrics import correlation_distance, marginal_total_variation, tstr_score

    cols = [c for c in train.columns if c != "label"]
    syn = syn[train.columns]
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    auc = tstr_score(
        clf,
        syn[cols].to_numpy(float),
        syn["label"].to_numpy().astype(int),
        X_test[cols].to_numpy(float),
        y_test.astype(int),
    )
    a, b = train.astype(float), syn.astype(float)
    return {
        "tstr_auc": auc,
        "marginal_tv": marginal_total_variation(a, b, bins=10),
        "corr_dist": correlation_distance(a, b, norm="mean_abs"),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny settings (smoke run)")
    parser.add_argument("--datasets", default="breast_cancer,sprint_like")
    parser.add_argument(
        "--only", default=None, help="comma-separated synthesizer names ('' for none)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smartnoise-python", default=os.environ.get("SNSYNTH_PYTHON"))
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)  # tiny nets: one thread is much faster than oversubscription
    warnings.simplefilter("ignore")
    rows = []
    for ds in args.datasets.split(","):
        train, X_test, y_test, bounds = load(ds)
        cols = [c for c in train.columns if c != "label"]
        ref = evaluate(train, train, X_test, y_test)
        rows.append(
            dict(dataset=ds, synthesizer="real (TRTR)", epsilon="-", **ref, fit_s=0.0, spent="-")
        )
        names = list(SYNTHS) if args.only is None else [n for n in args.only.split(",") if n]
        for name in names:
            if name == "gan_conv1d_acgan" and ds != "sprint_like":
                continue
            for eps in EPSILONS:
                t0 = time.perf_counter()
                try:
                    est, syn = SYNTHS[name](train, eps, bounds, args.seed, args.quick)
                    fit_s = time.perf_counter() - t0
                    m = evaluate(train, syn, X_test, y_test)
                    spent = f"{est.epsilon_spent_:.3g}"
                except Exception as exc:  # report, keep going
                    m = dict(tstr_auc=math.nan, marginal_tv=math.nan, corr_dist=math.nan)
                    fit_s, spent = time.perf_counter() - t0, f"error: {type(exc).__name__}"
                rows.append(
                    dict(dataset=ds, synthesizer=name, epsilon=eps, **m, fit_s=fit_s, spent=spent)
                )
                print(rows[-1], flush=True)
        if args.smartnoise_python:
            for sn in ("mst", "dpctgan"):
                for eps in EPSILONS[:2]:
                    t0 = time.perf_counter()
                    try:
                        syn = run_smartnoise(
                            args.smartnoise_python, sn, train, eps, args.quick, bounds
                        )
                        m = evaluate(train, syn, X_test, y_test)
                        spent = f"{eps:g} (claimed)"
                    except Exception as exc:
                        m = dict(tstr_auc=math.nan, marginal_tv=math.nan, corr_dist=math.nan)
                        spent = f"error: {type(exc).__name__}"
                    rows.append(
                        dict(
                            dataset=ds,
                            synthesizer=f"smartnoise_{sn}",
                            epsilon=eps,
                            **m,
                            fit_s=time.perf_counter() - t0,
                            spent=spent,
                        )
                    )
                    print(rows[-1], flush=True)
        del cols
    print()
    print(
        "| dataset | synthesizer | epsilon | TSTR AUC | 1-way TV | corr. dist. | fit (s) "
        "| epsilon spent |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['synthesizer']} | {r['epsilon']} | {r['tstr_auc']:.3f} | "
            f"{r['marginal_tv']:.3f} | {r['corr_dist']:.3f} | {r['fit_s']:.1f} | "
            f"{r['spent']} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
