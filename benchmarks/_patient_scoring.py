"""Patient-level ROC AUC / average precision against group privacy.

Data: :func:`skdp.datasets.make_longitudinal_ehr` (patients with ``1 + Poisson(3)``
visits, at most ``K_MAX`` = 20 by the simulated protocol). The outcome is the public
threshold ``y > 60`` (the generator's ``event``); the score is a fixed public risk model
(the generator's linear predictor without the patient effect, as if trained elsewhere),
so only the evaluation touches the private rows. Error: ``|released - exact|`` against
the exact metric on **all** rows, median (and 90th percentile) over ``--seeds`` seeds
(each seed: new patients and noise), at the same **per-patient** ``(epsilon, delta)``:

* ``patient k=3``: ``groups=patient, max_rows_per_group=3`` (rows beyond 3 dropped at
  random; the patient-level smooth sensitivity);
* ``group-priv``: the row-level release at ``epsilon / K_MAX`` and
  ``delta / (K_MAX exp((K_MAX - 1) epsilon / K_MAX))`` (group privacy for a patient
  with at most ``K_MAX`` rows, Dwork and Roth 2014, Thm 2.2) -- generous to group
  privacy: the row-level relation is replace-one with the row count public, which does
  not by itself cover adding a patient;
* ``per-row``: the row-level release at ``epsilon`` -- **not** a patient-level
  guarantee (about ``v epsilon`` for a patient with ``v`` visits): the cost reference;
* ``k=3 bounding``: the exact metric on the rows the bounding keeps (no noise): the
  part of the ``patient k=3`` error that is the bias of scoring at most 3 visits a
  patient.

Run ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/_patient_scoring.py --seeds 10``.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np

from benchmarks._patient_dpsgd import group_privacy_budget
from skdp.datasets import make_longitudinal_ehr
from skdp.metrics import dp_average_precision_score, dp_roc_auc_score

K_MAX = 20
K = 3
SETTINGS = [(1000, 1.0, 0.0), (1000, 1.0, 1e-6), (5000, 1.0, 1e-6), (20000, 1.0, 1e-6)]
METRICS = {"AUC": dp_roc_auc_score, "AP": dp_average_precision_score}
METHODS = ("patient k=3", "group-priv", "per-row", "k=3 bounding")


def _public_score(X):
    """The generator's linear predictor without the patient effect (a public model)."""
    return 0.4 * (X[:, 0] - 50.0) + 5.0 * X[:, 1] + 2.0 * X[:, 2:].sum(axis=1)


def _errors(metric, n_patients, eps, delta, seed):
    X, _, event, groups = make_longitudinal_ehr(n_patients, random_state=seed)
    score = _public_score(X)
    exact = metric(event, score, epsilon=math.inf)
    eps_g, delta_g = group_privacy_budget(eps, delta, K_MAX)
    rs = seed + 10_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        released = {
            "patient k=3": metric(
                event,
                score,
                epsilon=eps,
                delta=delta,
                groups=groups,
                max_rows_per_group=K,
                random_state=rs,
            ),
            "group-priv": metric(event, score, epsilon=eps_g, delta=delta_g, random_state=rs),
            "per-row": metric(event, score, epsilon=eps, delta=delta, random_state=rs),
            # the bounding alone (no noise): the part of the k=3 error that is bias
            "k=3 bounding": metric(
                event,
                score,
                epsilon=math.inf,
                groups=groups,
                max_rows_per_group=K,
                random_state=rs,
            ),
        }
    return {name: abs(v - exact) for name, v in released.items()}, exact


def run(seeds=10):
    """Rows ``(metric, n_patients, eps, delta, mean exact, {method: (median, p90)})``."""
    rows = []
    for label, metric in METRICS.items():
        for n_patients, eps, delta in SETTINGS:
            errs = {m: [] for m in METHODS}
            exacts = []
            for seed in range(seeds):
                e, exact = _errors(metric, n_patients, eps, delta, seed)
                exacts.append(exact)
                for m in METHODS:
                    errs[m].append(e[m])
            summary = {
                m: (float(np.median(v)), float(np.quantile(v, 0.9))) for m, v in errs.items()
            }
            rows.append((label, n_patients, eps, delta, float(np.mean(exacts)), summary))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    t0 = time.perf_counter()
    rows = run(args.seeds)
    print(
        f"|error| vs the exact metric on all rows, median (p90) over {args.seeds} seeds; "
        f"load {os.getloadavg()[0]:.1f}"
    )
    head = "| metric | patients | eps | delta | exact | " + " | ".join(METHODS) + " | ratio |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for label, n, eps, delta, exact, s in rows:
        cells = " | ".join(f"{s[m][0]:.4f} ({s[m][1]:.4f})" for m in METHODS)
        ratio = s["group-priv"][0] / max(s["patient k=3"][0], 1e-12)
        print(f"| {label} | {n} | {eps:g} | {delta:g} | {exact:.3f} | {cells} | {ratio:.1f} |")
    print(f"({time.perf_counter() - t0:.0f} s; ratio = group-priv / patient k=3 median)")


if __name__ == "__main__":
    main()
