"""DPCoxPH against lifelines' CoxPHFitter, in the same run.

For each data set and seed the rows are split in half at random; lifelines' Cox model
and DPCoxPH are fitted on the training half, and Harrell's C-index of each is measured
on the held-out half. Columns:

* ``C_ll``: lifelines' held-out C-index; ``gap``: DPCoxPH's minus lifelines' (mean and
  worst over seeds);
* ``signs``: among the covariates lifelines finds significant at p < 0.001 on the
  training half, the share of (seed, covariate) pairs whose sign DPCoxPH keeps, and the
  smallest per-covariate share (targets: >= 90 %);
* ``fit_s``: DPCoxPH's median fit time;
* with ``--compare``, ``dpgd_gap_*``: the same gap for a second design, full-batch DP
  gradient descent (Adam, 30 steps, the same per-patient clipping) through skdp's
  DP-SGD step, which divides by ``n`` as the engine does.

Data: a simulator with known hazard ratios (6 or 10 features, n = 3,000 or 10,000
training patients) and public data shipped with lifelines and scikit-survival (FLCHAIN,
n = 7,874; and the small WHAS500, GBSG2, AIDS and Rossi sets, reported at their own n,
below the n >= 3,000 of the targets). Every bound and horizon is declared from domain
knowledge (never read off the rows). Targets (issue): at epsilon = 1 and n >= 3,000 a
gap within 0.02, at epsilon = 0.3 within 0.05; a default fit on 10,000 patients in under
10 s on one core.

Usage: ``python benchmarks/survival_cox.py [--seeds 10] [--quick] [--compare]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from skdp.survival import DPCoxPH, make_survival_target  # noqa: E402
from skdp.survival._cox_score import concordance_index  # noqa: E402

TRUE_BETA = np.array([0.04, 0.3, 0.2, -0.5, 0.3, 0.0, 0.25, -0.25, 0.0, 0.15])


def simulate(n, d, rng):
    """Weibull proportional hazards with known log hazard ratios ``TRUE_BETA[:d]``:
    age, sex, a skewed biomarker, treatment, a covariate correlated with age, a null
    one, then (d = 10) two more binary and two more normal covariates."""
    age = np.clip(rng.normal(60, 12, n), 20, 95)
    cols = [
        age,
        rng.integers(0, 2, n).astype(float),
        np.clip(rng.lognormal(0.5, 0.6, n), 0, 10),
        rng.integers(0, 2, n).astype(float),
        np.clip(0.6 * (age - 60) / 12 + 0.8 * rng.normal(size=n), -4, 4),
        np.clip(rng.normal(size=n), -4, 4),
        rng.integers(0, 2, n).astype(float),
        (rng.random(n) < 0.3).astype(float),
        np.clip(rng.normal(size=n), -4, 4),
        np.clip(rng.normal(size=n), -4, 4),
    ]
    X = np.column_stack(cols[:d])
    lo = np.array([20, 0, 0, 0, -4, -4, 0, 0, -4, -4.0])[:d]
    hi = np.array([95, 1, 10, 1, 4, 4, 1, 1, 4, 4.0])[:d]
    lp = (X - X.mean(0)) @ TRUE_BETA[:d]
    t = (-np.log(rng.random(n)) / (0.05 * np.exp(lp))) ** (1 / 1.3)
    c = rng.uniform(0, 15, n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    return df, np.minimum(t, c), t <= c, (lo, hi), 10.0


def _sksurv(name):
    from sksurv import datasets

    X, y = getattr(datasets, f"load_{name}")()
    event, time_ = (y[f] for f in y.dtype.names)
    return X, np.asarray(time_, float), np.asarray(event, bool)


def _binary(col, positive):
    return (col.astype(str) == positive).astype(float)


def load_flchain():
    X, t, e = _sksurv("flchain")
    df = pd.DataFrame(
        {
            "age": X["age"],
            "male": _binary(X["sex"], "M"),
            "kappa": X["kappa"],
            "lambda": X["lambda"],
            "mgus": _binary(X["mgus"], "yes"),
        }
    )
    bounds = ([50, 0, 0, 0, 0], [100, 1, 10, 10, 1])
    return df, t, e, bounds, 5000.0


def load_whas500():
    X, t, e = _sksurv("whas500")
    num = ["age", "bmi", "hr", "sysbp", "diasbp"]
    df = X[num].astype(float).copy()
    for c in ["gender", "chf", "sho", "afb", "miord"]:
        df[c] = _binary(X[c], "1")
    bounds = ([30, 10, 30, 50, 0, 0, 0, 0, 0, 0], [100, 50, 200, 250, 200, 1, 1, 1, 1, 1])
    return df, t, e, bounds, 2000.0


def load_gbsg2():
    X, t, e = _sksurv("gbsg2")
    df = X[["age", "estrec", "pnodes", "progrec", "tsize"]].astype(float).copy()
    df["horTh"] = _binary(X["horTh"], "yes")
    df["post"] = _binary(X["menostat"], "Post")
    df["tgrade"] = X["tgrade"].astype(str).map({"I": 1.0, "II": 2.0, "III": 3.0})
    bounds = ([20, 0, 0, 0, 0, 0, 0, 1], [80, 1000, 50, 1000, 120, 1, 1, 3])
    return df, t, e, bounds, 2500.0


def load_aids():
    X, t, e = _sksurv("aids")
    df = X[["age", "cd4", "priorzdv"]].astype(float).copy()
    df["karnof"] = X["karnof"].astype(str).astype(float)
    df["tx"] = _binary(X["tx"], "1")
    df["male"] = _binary(X["sex"], "1")
    bounds = ([15, 0, 0, 70, 0, 0], [75, 400, 300, 100, 1, 1])
    return df, t, e, bounds, 360.0


def load_rossi():
    from lifelines.datasets import load_rossi as rossi

    r = rossi()
    df = r.drop(columns=["week", "arrest"]).astype(float)
    lo = [0, 15, 0, 0, 0, 0, 0]
    hi = [1, 50, 1, 1, 1, 1, 20]
    return df, r["week"].to_numpy(float), r["arrest"].to_numpy(bool), (lo, hi), 52.0


def dpgd_coef(df, t, e, bounds, horizon, epsilon, seed, steps=30, lr=0.2, clip=2.0):
    """A second design, for comparison: full-batch DP gradient descent (Adam) on the same
    piecewise-exponential log-likelihood with the same per-patient clipping, through
    skdp's one DP-SGD step (:func:`skdp.training.make_dp_step`, sample rate 1, noise
    calibrated by the RDP accountant for ``steps`` steps). Benchmark only: it divides
    by ``n`` as the engine does (``n`` public)."""
    import torch

    from skdp.accounting import calibrate_noise_multiplier
    from skdp.survival._cox_fit import gradient_sum, pe_data
    from skdp.survival._grid import time_grid_edges
    from skdp.training import make_dp_step

    lo, hi = (np.asarray(b, float) for b in bounds)
    Z = (np.clip(df.to_numpy(float), lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)
    edges = time_grid_edges(horizon, n_intervals=10)
    data = pe_data(Z, e, t, edges)
    J, d = edges.size - 1, Z.shape[1]
    rate = e.sum() / data.exposure.sum()
    params = {
        "alpha": torch.nn.Parameter(torch.full((J,), float(np.log(rate)), dtype=torch.float64)),
        "beta": torch.nn.Parameter(torch.zeros(d, dtype=torch.float64)),
    }
    sigma = calibrate_noise_multiplier(epsilon=epsilon, delta=1e-5, sample_rate=1.0, steps=steps)
    step = make_dp_step(
        params,
        torch.optim.Adam(params.values(), lr=lr),
        n_samples=len(t),
        sample_rate=1.0,
        noise_multiplier=sigma,
        max_grad_norm=clip,
        private=True,
        accountant="rdp",
        sampling_rng=np.random.default_rng(seed),
        noise_rng=np.random.default_rng(seed + 1),
        device="cpu",
    )

    def grad_sum(idx):  # minus the clipped log-likelihood gradients (a loss)
        a, b = (params[k].detach().numpy() for k in ("alpha", "beta"))
        g = -gradient_sum(data, a, b, clip)
        return {"alpha": torch.from_numpy(g[:J]), "beta": torch.from_numpy(g[J:])}, 0

    for _ in range(steps):
        step.step(grad_sum)
    return params["beta"].detach().numpy() / ((hi - lo) / 2)


def lifelines_fit(df, t, e):
    from lifelines import CoxPHFitter

    data = df.copy()
    data["_T"], data["_E"] = t, e
    cph = CoxPHFitter().fit(data, "_T", "_E")
    return cph.params_.to_numpy(), cph.summary["p"].to_numpy()


def one_seed(load, seed, epsilons, n_train=None, compare=False, **params):
    """Held-out C-indices of lifelines and DPCoxPH (per epsilon) for one split."""
    rng = np.random.default_rng(seed)
    if isinstance(load, tuple):  # a simulator: (d, n_train)
        d, n_sim = load
        df, t, e, bounds, horizon = simulate(2 * n_sim, d, rng)
    else:
        df, t, e, bounds, horizon = load()
    # both models see the features clipped to the declared bounds (lifelines does not
    # converge on FLCHAIN's raw heavy-tailed kappa/lambda)
    df = df.clip(np.asarray(bounds[0], float), np.asarray(bounds[1], float), axis=1)
    perm = rng.permutation(len(df))
    half = len(df) // 2 if n_train is None else n_train
    tr, te = perm[:half], perm[half:]
    coef_ll, p_ll = lifelines_fit(df.iloc[tr], t[tr], e[tr])
    c_ll = concordance_index(e[te], t[te], df.iloc[te].to_numpy() @ coef_ll)
    y_tr = make_survival_target(e[tr], t[tr])
    y_te = make_survival_target(e[te], t[te])
    out = {"c_ll": c_ll, "n": len(tr), "events": int(e[tr].sum())}
    for eps in epsilons:
        cox = DPCoxPH(epsilon=eps, bounds_X=bounds, max_time=horizon, random_state=seed, **params)
        start = time.perf_counter()
        cox.fit(df.iloc[tr], y_tr)
        out[("time", eps)] = time.perf_counter() - start
        out[("gap", eps)] = cox.score(df.iloc[te], y_te) - c_ll
        sig = p_ll < 1e-3
        out[("signs", eps)] = np.where(sig, np.sign(cox.coef_) == np.sign(coef_ll), np.nan)
        if compare:
            coef = dpgd_coef(df.iloc[tr], t[tr], e[tr], bounds, horizon, eps, seed)
            out[("dpgd_gap", eps)] = concordance_index(e[te], t[te], df.iloc[te] @ coef) - c_ll
    return out


def summarise(name, runs, epsilons):
    rows = []
    for eps in epsilons:
        gaps = np.array([r[("gap", eps)] for r in runs])
        signs = np.array([r[("signs", eps)] for r in runs], dtype=float)
        kept = np.nanmean(signs) if np.isfinite(signs).any() else np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            per_cov = np.nanmean(signs, axis=0)
        worst_cov = np.nanmin(per_cov) if np.isfinite(per_cov).any() else np.nan
        rows.append(
            {
                "data": name,
                "n_train": runs[0]["n"],
                "events": int(np.mean([r["events"] for r in runs])),
                "eps": eps,
                "C_ll": np.mean([r["c_ll"] for r in runs]),
                "gap_mean": gaps.mean(),
                "gap_worst": gaps.min(),
                "signs_kept": kept,
                "signs_worst_cov": worst_cov,
                "fit_s": np.median([r[("time", eps)] for r in runs]),
            }
        )
        if ("dpgd_gap", eps) in runs[0]:
            rows[-1]["dpgd_gap_mean"] = np.mean([r[("dpgd_gap", eps)] for r in runs])
            rows[-1]["dpgd_gap_worst"] = np.min([r[("dpgd_gap", eps)] for r in runs])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="3 seeds, simulators only")
    parser.add_argument(
        "--compare", action="store_true", help="also the DP-GD design (needs torch)"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    epsilons = (1.0, 0.3)
    sets = {
        "sim d=6": (6, 3000),
        "sim d=10": (10, 3000),
        "sim d=6 n=10k": (6, 10000),
        "flchain": load_flchain,
        "whas500": load_whas500,
        "gbsg2": load_gbsg2,
        "aids": load_aids,
        "rossi": load_rossi,
    }
    seeds = 3 if args.quick else args.seeds
    if args.quick:
        sets = {k: v for k, v in sets.items() if k.startswith("sim") and "10k" not in k}
    rows = []
    for name, load in sets.items():
        runs = [one_seed(load, s, epsilons, compare=args.compare) for s in range(seeds)]
        rows += summarise(name, runs, epsilons)
        print(pd.DataFrame(rows[-len(epsilons) :]).round(4).to_string(index=False), flush=True)
    print("\nDPCoxPH vs lifelines CoxPHFitter, held-out C-index (half split), seeds:", seeds)
    print(pd.DataFrame(rows).round(4).to_string(index=False))


if __name__ == "__main__":
    main()
