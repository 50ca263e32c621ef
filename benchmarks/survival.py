"""DPKaplanMeier and dp_logrank_test against lifelines, in the same run.

Kaplan--Meier table (one row per data set and epsilon; mean over seeds, worst in
brackets where it matters):

* ``sup_grid``: sup over the grid edges of |DP curve - lifelines' KaplanMeierFitter|
  (both on the rows censored at the public horizon); ``sup_all``: the same sup over
  every time in the follow-up, for the step function (it keeps its value inside a grid
  interval, so this adds up to one interval's drop) and ``sup_lin`` for
  ``predict(..., interpolate=True)``;
* ``hold``: share of grid edges where the 95 % band holds the non-private curve;
* ``cover``: simulators only, share of grid edges where the band covers the true curve;
* ``fit_s``: median time of a default fit (one core).

Targets (issue): at epsilon = 1, sup <= 0.02 for n >= 2,000 (<= 0.05 at epsilon = 0.1);
hold >= 90 %; cover >= 93 %; a default fit on 10,000 patients under 10 s.

Log-rank table: size (hazard ratio 1) and power (hazard ratio 1.5) of the DP test at
alpha = 0.05 against lifelines' ``logrank_test`` on the same simulated trials (n =
2,000, two arms), and the median p-values on public trials (arms from the data set's
treatment or group column; the arm labels are public).

Data: Weibull and exponential simulators with known curves (n = 2,000 and 10,000), and
public data shipped with lifelines and scikit-survival: Rossi (n = 432, horizon 52
weeks), WHAS500 (500, 2,000 days), GBSG2 (686, 2,500 days), veterans' lung cancer
(137, 600 days), AIDS (1,151, 360 days), FLCHAIN (7,874, 5,000 days). Horizons are the
planned follow-up, declared (never read off the rows). Defaults everywhere (grid from
epsilon only); nothing tuned per table.

Usage: ``python benchmarks/survival.py [--seeds 10] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from skdp.survival import DPKaplanMeier, dp_logrank_test, make_survival_target  # noqa: E402

EPSILONS = (1.0, 0.1)


def weibull(n, rng, shape=1.5, scale=10.0):
    te, tc = scale * rng.weibull(shape, n), rng.uniform(0, 30, n)
    truth = lambda t: np.exp(-((np.asarray(t) / scale) ** shape))  # noqa: E731
    return te <= tc, np.minimum(te, tc), 20.0, truth


def exponential(n, rng, scale=8.0):
    te, tc = rng.exponential(scale, n), rng.exponential(3 * scale, n)
    truth = lambda t: np.exp(-np.asarray(t) / scale)  # noqa: E731
    return te <= tc, np.minimum(te, tc), 20.0, truth


def _sksurv(name, horizon, arm=None):
    from sksurv import datasets

    X, y = getattr(datasets, f"load_{name}")()
    event, t = (y[f] for f in y.dtype.names)
    labels = None if arm is None else arm(X)
    return np.asarray(event, bool), np.asarray(t, float), horizon, labels


def public_sets():
    from lifelines.datasets import load_rossi

    r = load_rossi()
    return {
        "rossi": (r["arrest"].to_numpy(bool), r["week"].to_numpy(float), 52.0,
                  r["fin"].to_numpy(int)),
        "whas500": _sksurv("whas500", 2000.0, lambda X: X["gender"].astype(str).eq("1")
                           .to_numpy().astype(int)),
        "gbsg2": _sksurv("gbsg2", 2500.0, lambda X: X["horTh"].astype(str).eq("yes")
                         .to_numpy().astype(int)),
        "veterans": _sksurv("veterans_lung_cancer", 600.0, lambda X: X["Treatment"]
                            .astype(str).eq("test").to_numpy().astype(int)),
        "aids": _sksurv("aids", 360.0, lambda X: X["tx"].astype(str).eq("1")
                        .to_numpy().astype(int)),
        "flchain": _sksurv("flchain", 5000.0, lambda X: X["sex"].astype(str).eq("M")
                           .to_numpy().astype(int)),
    }  # fmt: skip


def km_metrics(event, t, horizon, eps, seed, truth=None):
    from lifelines import KaplanMeierFitter

    tc = np.minimum(t, horizon)
    ec = event & (t <= horizon)
    ref = KaplanMeierFitter().fit(tc, ec)
    y = make_survival_target(event, t)
    start = time.perf_counter()
    km = DPKaplanMeier(epsilon=eps, max_time=horizon, random_state=seed).fit(y)
    fit_s = time.perf_counter() - start
    e = km.time_grid_
    ref_grid = ref.survival_function_at_times(e).to_numpy()
    every = np.r_[e, np.unique(tc)]
    ref_all = ref.survival_function_at_times(every).to_numpy()
    band = km.predict_interval(e)
    out = {
        "sup_grid": np.abs(km.survival_function_ - ref_grid).max(),
        "sup_all": np.abs(km.predict(every) - ref_all).max(),
        "sup_lin": np.abs(km.predict(every, interpolate=True) - ref_all).max(),
        "hold": np.mean((band[:, 0] <= ref_grid + 1e-12) & (ref_grid <= band[:, 1] + 1e-12)),
        "fit_s": fit_s,
    }
    if truth is not None:
        s = truth(e)
        out["cover"] = np.mean((band[:, 0] <= s) & (s <= band[:, 1]))
    return out


def km_table(seeds, quick):
    rows = []
    sims = [("weibull", weibull, 2000), ("weibull", weibull, 10000),
            ("exponential", exponential, 2000)]  # fmt: skip
    for name, sim, n in sims[:1] if quick else sims:
        for eps in EPSILONS:
            runs = []
            for s in range(seeds):
                event, t, horizon, truth = sim(n, np.random.default_rng(s))
                runs.append(km_metrics(event, t, horizon, eps, s, truth))
            rows.append((f"{name} n={n}", eps, runs))
    for name, (event, t, horizon, _) in public_sets().items():
        for eps in EPSILONS:
            runs = [km_metrics(event, t, horizon, eps, s) for s in range(seeds)]
            rows.append((f"{name} n={len(t)}", eps, runs))
    print("\nKaplan-Meier: DP vs lifelines (mean [worst] over seeds)")
    heads = ("sup_grid", "sup_all", "sup_lin")
    print(f"{'data':22s} {'eps':>4s} " + " ".join(f"{h:>15s}" for h in heads)
          + f" {'hold':>6s} {'cover':>6s} {'fit_s':>6s}")  # fmt: skip
    for name, eps, runs in rows:

        def col(key, runs=runs):
            return np.array([r[key] for r in runs])

        cover = f"{col('cover').mean():6.3f}" if "cover" in runs[0] else f"{'-':>6s}"
        print(
            f"{name:22s} {eps:4.1f} {col('sup_grid').mean():6.3f} [{col('sup_grid').max():5.3f}]"
            f" {col('sup_all').mean():6.3f} [{col('sup_all').max():5.3f}]"
            f" {col('sup_lin').mean():6.3f} [{col('sup_lin').max():5.3f}]"
            f" {col('hold').mean():6.3f} {cover} {np.median(col('fit_s')):6.3f}"
        )


def _trial(n, hr, rng):
    arm = np.arange(n) % 2
    te = rng.exponential(10.0 * np.where(arm == 1, hr, 1.0))
    tc = rng.uniform(0, 40, n)
    return te <= tc, np.minimum(te, tc), arm


def logrank_table(seeds, quick):
    from lifelines.statistics import logrank_test

    n_trials = max(20, 10 * seeds) if not quick else 20
    print(f"\nLog-rank, simulated trials n = 2,000, alpha = 0.05, {n_trials} trials each")
    print(f"{'HR':>4s} {'eps':>4s} {'DP reject':>10s} {'lifelines reject':>17s}")
    for hr in (1.0, 1.5, 1.2):
        for eps in (1.0, 0.3, 0.1):
            hits = hits_ll = 0
            for r in range(n_trials):
                rng = np.random.default_rng(10_000 + r)
                event, t, arm = _trial(2000, hr, rng)
                res = dp_logrank_test(make_survival_target(event, t), arm, epsilon=eps,
                                      max_time=20.0, n_simulations=199, random_state=r)  # fmt: skip
                hits += res.p_value <= 0.05
                tc, ec = np.minimum(t, 20.0), event & (t <= 20.0)
                ll = logrank_test(tc[arm == 0], tc[arm == 1], ec[arm == 0], ec[arm == 1])
                hits_ll += ll.p_value <= 0.05
            print(f"{hr:4.1f} {eps:4.1f} {hits / n_trials:10.3f} {hits_ll / n_trials:17.3f}")
    print("\nLog-rank on public trials: median p-value over seeds")
    print(f"{'data':22s} {'lifelines':>10s} {'DP eps=1':>10s} {'DP eps=0.3':>11s}")
    for name, (event, t, horizon, arm) in public_sets().items():
        tc, ec = np.minimum(t, horizon), event & (t <= horizon)
        ll = logrank_test(tc[arm == 0], tc[arm == 1], ec[arm == 0], ec[arm == 1]).p_value
        y = make_survival_target(event, t)
        med = [np.median([dp_logrank_test(y, arm, epsilon=eps, max_time=horizon,
                                          random_state=s).p_value for s in range(seeds)])
               for eps in (1.0, 0.3)]  # fmt: skip
        print(f"{name + ' n=' + str(len(t)):22s} {ll:10.2g} {med[0]:10.2g} {med[1]:11.2g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    km_table(args.seeds, args.quick)
    logrank_table(args.seeds, args.quick)


if __name__ == "__main__":
    main()
