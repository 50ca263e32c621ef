"""DPFlowDensity: held-out log-likelihood and train-on-synthetic/test-on-real (TSTR) utility.

Mirrors the shape of the DP-NF paper's Tables 2-3 (spec dp_flow.md §5.3, §5.7) on data that
need no download:

* ``nonlinear``: the paper's simulated repeated-measures model (spec §5.5, the code's
  ``beta3 * exp(w3)`` term): 9 columns ``[w1..w4, x1..x5]``. TSTR task: random-forest
  regression of the mean outcome ``mean(x1..x5)`` on ``w1..w4`` (test MSE).
* ``breast_cancer`` (sklearn, 569 x 30 + binary label): the flow models the features and the
  label (a binary column). TSTR task: logistic regression of the label (test accuracy).
* ``diabetes`` (sklearn, 442 x 10 + continuous target). TSTR task: random-forest regression
  of the target (test MSE).

Bounds are public metadata: for the two sklearn datasets they are the min/max of the *full
public* dataset widened by 5 % (acceptable for a demo because that dataset is public, spec
§5.7); for the simulator they come from its definition. For each epsilon in {1, 5, inf}
(delta = 1e-5) the table reports the mean held-out log-likelihood per record (original
units) and the TSTR score next to train-on-real (TRTR), mean (sd) over seeds.

Usage::

    python benchmarks/flow_density.py --quick     # 1 seed, 300 steps: about 2-4 minutes
    python benchmarks/flow_density.py             # 3 seeds, 1500 steps
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import pandas as pd

BETA = (0.2, 1.0, 0.8, -1.2, 0.6)
A = (1.0, 3.0, 0.5, 2.0)


def make_nonlinear(n, rng):
    """Spec dp_flow.md §5.5: w_j ~ U(0, a_j), x_k = f(w) + r + e_k, sigma0 = sigma = 0.2."""
    w = rng.uniform(0, 1, size=(n, 4)) * np.array(A)
    b0, b1, b2, b3, b4 = BETA
    f = (
        b0
        + np.exp(b1 * w[:, 0])
        + np.log(w[:, 1] + np.exp(b2))
        + b3 * np.exp(w[:, 2])
        + np.log(w[:, 3] + np.exp(b4))
    )
    r = rng.normal(0, 0.2, size=n)
    x = f[:, None] + r[:, None] + rng.normal(0, 0.2, size=(n, 5))
    return pd.DataFrame(
        np.column_stack([w, x]),
        columns=[f"w{j}" for j in range(1, 5)] + [f"x{k}" for k in range(1, 6)],
    )


def _nonlinear_bounds():
    # f ranges over [f(0), f(a)] (each term monotone in its w); +- 5 sd of r + e
    b0, b1, b2, b3, b4 = BETA
    lo_f = b0 + 1 + math.log(math.exp(b2)) + b3 * math.exp(A[2]) + math.log(A[3] + math.exp(b4))
    hi_f = (
        b0
        + math.exp(b1 * A[0])
        + math.log(A[1] + math.exp(b2))
        + b3 * math.exp(0.0)
        + math.log(math.exp(b4))
    )
    lo_f, hi_f = min(lo_f, hi_f) - 1.5, max(lo_f, hi_f) + 1.5
    bounds = {f"w{j + 1}": (0.0, A[j]) for j in range(4)}
    bounds.update({f"x{k}": (lo_f, hi_f) for k in range(1, 6)})
    return bounds


def load(name, rng, n_train):
    from sklearn.datasets import load_breast_cancer, load_diabetes
    from sklearn.model_selection import train_test_split

    if name == "nonlinear":
        train = make_nonlinear(n_train, rng)
        test = make_nonlinear(2000, rng)
        return train, test, _nonlinear_bounds(), "regression"
    if name == "breast_cancer":
        ds = load_breast_cancer(as_frame=True)
        df = ds.frame.rename(columns=lambda c: c.replace(" ", "_"))
        df["target"] = df["target"].astype(bool)
        task = "classification"
    else:
        ds = load_diabetes(as_frame=True, scaled=False)
        df = ds.frame
        task = "regression"
    num = [c for c in df.columns if df[c].dtype.kind == "f" or c != "target"]
    num = [c for c in num if df[c].dtype.kind in "fi"]
    lo, hi = df[num].min(), df[num].max()
    pad = 0.05 * (hi - lo)
    bounds = {c: (float(lo[c] - pad[c]), float(hi[c] + pad[c])) for c in num}
    train, test = train_test_split(
        df, test_size=0.3, random_state=int(rng.integers(2**31)), stratify=None
    )
    return train.reset_index(drop=True), test.reset_index(drop=True), bounds, task


def tstr(name, task, fit_df, test_df, seed):
    """Fit the downstream model on ``fit_df``, score it on the real ``test_df``."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, mean_squared_error
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if name == "nonlinear":
        feats = ["w1", "w2", "w3", "w4"]
        ytr = fit_df[[f"x{k}" for k in range(1, 6)]].mean(axis=1)
        yte = test_df[[f"x{k}" for k in range(1, 6)]].mean(axis=1)
    else:
        feats = [c for c in fit_df.columns if c != "target"]
        ytr, yte = fit_df["target"], test_df["target"]
    if task == "classification":
        if ytr.nunique() < 2:
            return float(np.mean(yte == ytr.iloc[0]))  # constant predictor
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        model.fit(fit_df[feats], ytr)
        return accuracy_score(yte, model.predict(test_df[feats]))
    model = RandomForestRegressor(n_estimators=100, random_state=seed, n_jobs=1)
    model.fit(fit_df[feats], ytr)
    return mean_squared_error(yte, model.predict(test_df[feats]))


def run(args):
    import torch

    from skdp.density import DPFlowDensity

    torch.set_num_threads(args.threads)
    datasets = args.datasets
    epsilons = [1.0, 5.0, math.inf]
    seeds = list(range(args.seeds))
    results = []
    for name in datasets:
        for seed in seeds:
            rng = np.random.default_rng(1000 + seed)
            train, test, bounds, task = load(name, rng, args.n_train)
            trtr = tstr(name, task, train, test, seed)
            for eps in epsilons:
                t0 = time.perf_counter()
                est = DPFlowDensity(
                    epsilon=eps,
                    delta=1e-5,
                    bounds=bounds,
                    n_layers=args.n_layers,
                    hidden_size=args.hidden,
                    n_iter=args.n_iter,
                    batch_size=args.batch_size,
                    learning_rate=args.lr,
                    max_grad_norm=1.0,
                    device=args.device,
                    random_state=seed,
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    est.fit(train)
                lls = est.score_samples(test)
                ll, ll_med = float(lls.mean()), float(np.median(lls))
                syn = est.sample(len(train), random_state=seed + 17)
                util = tstr(name, task, syn, test, seed)
                results.append(
                    dict(
                        dataset=name,
                        task=task,
                        seed=seed,
                        epsilon=eps,
                        sigma=est.noise_multiplier_,
                        eps_spent=est.epsilon_spent_,
                        heldout_ll=ll,
                        heldout_ll_median=ll_med,
                        tstr=util,
                        trtr=trtr,
                        n_train=len(train),
                        seconds=time.perf_counter() - t0,
                    )
                )
                print(
                    f"  {name:<14} seed={seed} eps={eps:<4} sigma={est.noise_multiplier_:.3f} "
                    f"spent={est.epsilon_spent_:.3f} ll={ll:.3f} (median {ll_med:.3f}) "
                    f"tstr={util:.3f} "
                    f"trtr={trtr:.3f} ({time.perf_counter() - t0:.1f}s)",
                    flush=True,
                )
    return pd.DataFrame(results)


def _ms(v):
    v = np.asarray(v, dtype=float)
    if v.size == 1 or not np.all(np.isfinite(v)):
        return f"{v.mean():.3f}"
    return f"{v.mean():.3f} ({v.std(ddof=1):.3f})"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--datasets", nargs="*", default=["nonlinear", "breast_cancer", "diabetes"])
    parser.add_argument("--seeds", type=int)
    parser.add_argument("--n-iter", type=int)
    parser.add_argument("--n-train", type=int, default=1000, help="simulator training rows")
    parser.add_argument("--n-layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    if args.seeds is None:
        args.seeds = 1 if args.quick else 3
    if args.n_iter is None:
        args.n_iter = 300 if args.quick else 1500
    print(
        f"# DPFlowDensity benchmark: MAF n_layers={args.n_layers} hidden={args.hidden} "
        f"n_iter={args.n_iter} batch={args.batch_size} lr={args.lr} delta=1e-5 "
        f"seeds={args.seeds} device={args.device}"
    )
    df = run(args)
    print()
    print(
        "## Held-out log-likelihood per record (original units; higher is better): mean (the "
        "sklearn score) and median over test records"
    )
    print("## and TSTR utility next to train-on-real (TRTR); mean (sd) over seeds")
    print(
        "# TSTR: accuracy for breast_cancer (higher is better), test MSE for nonlinear and "
        "diabetes (lower is better)"
    )
    head = (
        f"{'dataset':<14} | {'n':>5} | {'epsilon':>7} | {'sigma':>7} | {'held-out LL':>16} | "
        f"{'median LL':>16} | {'TSTR':>16} | {'TRTR (real)':>16}"
    )
    print(head)
    print("-" * len(head))
    for (name, eps), g in df.groupby(["dataset", "epsilon"], sort=False):
        print(
            f"{name:<14} | {int(g.n_train.iloc[0]):>5} | {eps:>7} | {g.sigma.mean():>7.3f} | "
            f"{_ms(g.heldout_ll):>16} | {_ms(g.heldout_ll_median):>16} | {_ms(g.tstr):>16} | "
            f"{_ms(g.trtr):>16}"
        )


if __name__ == "__main__":
    main()
