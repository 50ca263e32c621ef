"""Patient-level DP-SGD against its baseline: DPLogisticRegression(mechanism="dpsgd").

Data: :func:`skdp.datasets.make_longitudinal_ehr` (patients with ``1 + Poisson(m - 1)``
visits, at most ``MAX_VISITS`` = 20 by the simulated protocol); the binary event of each
visit on age, sex and two drifting labs. Test AUC on 2,000 held-out patients (all their
visits), median over the seeds (each seed: new training patients, test patients and
noise), at the same **per-patient** ``(epsilon, delta = 1e-5)`` for every private method:

* ``group-priv``: what a careful user can do without ``groups``: a per-row DP-SGD fit
  calibrated (by skdp's accountant, inside ``fit``) to ``(epsilon / k_max,
  delta / (k_max e^{epsilon (k_max - 1) / k_max}))`` with ``k_max = 20`` the protocol's
  cap on visits: by group privacy (a per-row ``(e, d)``-DP release is ``(k e, k
  e^{(k-1) e} d)``-DP for a group of ``k`` rows, Dwork & Roth 2014, Lemma 2.2 for
  ``d = 0``, Vadhan 2017 for ``d > 0``) it is ``(epsilon, delta)``-DP per patient;
* ``patient k=3``: ``fit(X, y, groups=patient)`` with ``max_rows_per_group=3`` (rows
  beyond 3 dropped at random; patients Poisson-sampled, each patient's gradient sum over
  3 clipped once, :mod:`skdp.training._patients`), ``batch_size`` then counting
  patients;
* ``per-row``: the per-row DP-SGD fit at ``(epsilon, delta)`` -- **not** a patient-level
  guarantee (a patient with ``v`` visits is protected at about ``v epsilon``): the cost
  reference;
* ``non-private``: scikit-learn's ``LogisticRegression`` on all rows.

Every DP-SGD fit uses the estimator's defaults (300 Adam steps, batch size 64, clipping
norm 1, PLD accountant) and the public bounds ``LONGITUDINAL_EHR_BOUNDS``.

Run ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/_patient_dpsgd.py --seeds 3``
(a few minutes on one core).
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.linear_model import DPLogisticRegression

MAX_VISITS = 20
K = 3
DELTA = 1e-5
SETTINGS = [(300, 4.0), (1000, 4.0)]
EPSILONS = (1.0, 3.0)
METHODS = ("group-priv", f"patient k={K}", "per-row", "non-private")


def group_privacy_budget(epsilon, delta, k):
    """The per-row ``(epsilon_row, delta_row)`` whose group privacy for ``k`` rows is
    ``(epsilon, delta)``: ``epsilon / k`` and ``delta / (k e^{(k - 1) epsilon / k})``."""
    e = epsilon / k
    return e, delta / (k * math.exp((k - 1) * e))


def _fit(eps, delta, X, y, groups=None, k=None, seed=0):
    est = DPLogisticRegression(
        epsilon=eps,
        delta=delta,
        mechanism="dpsgd",
        bounds_X=LONGITUDINAL_EHR_BOUNDS(),
        classes=[0, 1],
        max_rows_per_group=k,
        random_state=seed,
    )
    return est.fit(X, y, groups=groups)


def run(seeds, settings=SETTINGS, epsilons=EPSILONS):
    """One row per (setting, epsilon, method, seed): ``dict(patients, mean_visits,
    epsilon, method, seed, auc, noise_multiplier)``."""
    rows = []
    for n, m in settings:
        for seed in range(int(seeds)):
            X, _, e, g = make_longitudinal_ehr(
                n, mean_visits=m, max_visits=MAX_VISITS, random_state=seed
            )
            Xt, _, et, _ = make_longitudinal_ehr(
                2000, mean_visits=m, max_visits=MAX_VISITS, random_state=10_000 + seed
            )
            lo, hi = LONGITUDINAL_EHR_BOUNDS()
            plain = LogisticRegression(max_iter=1000).fit((X - lo) / (hi - lo), e)
            auc_plain = roc_auc_score(et, plain.decision_function((Xt - lo) / (hi - lo)))
            for eps in epsilons:
                fits = {
                    "group-priv": _fit(
                        *group_privacy_budget(eps, DELTA, MAX_VISITS), X, e, seed=seed
                    ),
                    f"patient k={K}": _fit(eps, DELTA, X, e, groups=g, k=K, seed=seed),
                    "per-row": _fit(eps, DELTA, X, e, seed=seed),
                }
                for method, est in fits.items():
                    auc = roc_auc_score(et, est.decision_function(Xt))
                    rows.append(_row(n, m, eps, method, seed, auc, est.noise_multiplier_))
                rows.append(_row(n, m, eps, "non-private", seed, auc_plain, 0.0))
    return rows


def _row(n, m, eps, method, seed, auc, sigma):
    return dict(
        patients=n,
        mean_visits=m,
        epsilon=eps,
        method=method,
        seed=seed,
        auc=float(auc),
        noise_multiplier=float(sigma),
    )


def table(rows):
    """Markdown table of the median AUC (and the median noise multiplier) per cell."""
    cells = {}
    for r in rows:
        key = (r["patients"], r["mean_visits"], r["epsilon"])
        cells.setdefault(key, {}).setdefault(r["method"], []).append(r)
    lines = [
        "|patients|mean visits|eps|" + "|".join(METHODS) + f"|k={K} - group-priv|",
        "|" + "---|" * (len(METHODS) + 4),
    ]
    for (n, m, eps), by in cells.items():
        med = {k: float(np.median([r["auc"] for r in v])) for k, v in by.items()}
        sig = {k: float(np.median([r["noise_multiplier"] for r in v])) for k, v in by.items()}
        parts = [f"{med[k]:.3f}" + (f" (σ {sig[k]:.2g})" if sig[k] > 0 else "") for k in METHODS]
        gain = med[f"patient k={K}"] - med["group-priv"]
        lines.append(f"|{n}|{m:g}|{eps:g}|" + "|".join(parts) + f"|{gain:+.3f}|")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    rows = run(args.seeds)
    print(f"### Median test AUC over {args.seeds} seeds, same per-patient (epsilon, 1e-5)\n")
    print(table(rows))
    print(
        f"\n{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}; "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )


if __name__ == "__main__":
    main()
