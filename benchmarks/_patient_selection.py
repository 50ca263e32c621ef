"""Patient-level k-median and ILP against group privacy, on longitudinal records.

Data: :func:`skdp.datasets.make_longitudinal_ehr` (patients with ``1 + Poisson(m - 1)``
visits, at most ``K_MAX`` = 20 by the simulated protocol). Every method runs at the same
**per-patient** epsilon:

* ``patient k=3``: ``fit(..., groups=patient)`` with ``max_rows_per_group=3`` (rows
  beyond 3 dropped at random inside the mechanism; every sensitivity 3 times the row's);
* ``group-priv``: what a careful user can do without ``groups``: the per-row fit at
  ``epsilon / K_MAX`` (group privacy, pure DP: a per-row ``epsilon / k``-DP fit is
  ``epsilon``-DP for a patient with at most ``k`` rows);
* ``per-row``: the per-row fit at ``epsilon`` -- **not** a patient-level guarantee (about
  ``v epsilon`` for a patient with ``v`` visits): the cost reference;
* ``non-private``: ``epsilon = inf`` (the same search without noise).

k-median (:class:`~skdp.cluster.SubsampledExpMedian`, 3 centres, default box search on
the public unit box): age and the two labs, scaled to ``[0, 1]`` with the public ranges
``LONGITUDINAL_EHR_BOUNDS``; the number is the mean distance of a held-out row (2,000 new
patients) to its nearest centre (lower is better). ILP (:class:`~skdp.ilp.DPILPClassifier`,
2 clauses of at most 2 atoms): 8 atoms from public cut points (age > 50, 60, 70; sex;
lab_1 > -1, 0; lab_2 > 1, 2), target the event ``y > 60``; held-out accuracy (always
predicting 0 scores about 0.70). Median over ``--seeds`` seeds (each seed: new patients,
test patients and noise).

Run ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/_patient_selection.py --seeds 5``
(about 6 minutes on a shared 2-core machine, load average 12). Measured, 5 seeds:

========  ========  ===  ===========  ==========  =======  ===========
task      patients  eps  patient k=3  group-priv  per-row  non-private
========  ========  ===  ===========  ==========  =======  ===========
k-median  1000      1    0.1450       0.1972      0.1390   0.1378
k-median  1000      3    0.1398       0.1861      0.1380   0.1378
k-median  5000      1    0.1391       0.1450      0.1378   0.1377
k-median  5000      3    0.1378       0.1404      0.1377   0.1377
ILP       1000      1    0.7742       0.6990      0.7843   0.7988
ILP       1000      3    0.7895       0.7256      0.7827   0.7988
ILP       5000      1    0.7806       0.7743      0.7966   0.8037
ILP       5000      3    0.7882       0.7826      0.7927   0.8037
========  ========  ===  ===========  ==========  =======  ===========

k-median: ``k=3`` stays within 4.3 % of the per-row cost reference where group privacy
loses up to 42 % (1,000 patients). ILP (rows recorded again with the noise-aware
clause choice, the default; load average 0.9): ``k=3`` beats group privacy in every
cell, by 0.6-7.5 accuracy points. With the thesis's clause choice (``clause_score=
"noisy"``) it lost the cell of 1,000 patients at ``eps = 3`` (0.762 vs 0.770) and group
privacy read 0.709-0.770.

The ILP now runs ``clause_score="cautious"`` for every method (:data:`ILP_CLAUSE_SCORE`;
it keeps patient level at the majority rate on the public tables, where the noise-aware
choice fell below it: ``_patient_public.py``). Here, 20 seeds (2 shared cores, load
average 7), patient ``k=3`` / group-priv, medians: 0.767 / 0.682, 0.773 / 0.746, 0.779
/ 0.757, 0.782 / 0.772 in the four settings above (1,000 patients at ``eps`` 1 and 3,
then 5,000), against 0.774 / 0.704, 0.775 / 0.728, 0.780 / 0.759, 0.783 / 0.774 with the
noise-aware choice at the same seeds: patient level beats group privacy in every cell
either way, and the cautious choice costs it at most 0.007.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np

from skdp.cluster import SubsampledExpMedian
from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.ilp import DPILPClassifier

K_MAX = 20
K = 3
MEAN_VISITS = 4.0
SETTINGS = [(1000, 1.0), (1000, 3.0), (5000, 1.0), (5000, 3.0)]
METHODS = ("patient k=3", "group-priv", "per-row", "non-private")
#: public cut points of the ILP atoms: (column, threshold)
CUTS = [(0, 50.0), (0, 60.0), (0, 70.0), (1, 0.5), (2, -1.0), (2, 0.0), (3, 1.0), (3, 2.0)]
KMEDIAN_COLUMNS = [0, 2, 3]
#: the ILP's clause choice, for every method alike
ILP_CLAUSE_SCORE = "cautious"


def _scaled(X):
    """Age and the labs in ``[0, 1]`` by the public ranges (a fixed row-wise map)."""
    lo, hi = LONGITUDINAL_EHR_BOUNDS()
    cols = KMEDIAN_COLUMNS
    return np.clip((X[:, cols] - lo[cols]) / (hi[cols] - lo[cols]), 0.0, 1.0)


def _atoms(X):
    return np.column_stack([X[:, j] > t for j, t in CUTS]).astype(int)


def _plans(eps):
    """``{method: (epsilon, groups?, k)}`` at per-patient ``eps``."""
    return {
        "patient k=3": (eps, True, K),
        "group-priv": (eps / K_MAX, False, None),
        "per-row": (eps, False, None),
        "non-private": (math.inf, False, None),
    }


def _kmedian(eps, groups, k, X, g, Xt, seed):
    est = SubsampledExpMedian(
        n_clusters=3, epsilon=eps, bounds=(0, 1), max_rows_per_group=k, random_state=seed
    )
    est.fit(X, groups=g if groups else None)
    return -est.score(Xt) / len(Xt)


def _ilp(eps, groups, k, A, y, g, At, yt, seed):
    est = DPILPClassifier(
        epsilon=eps, n_clauses=2, max_clause_length=2, clause_score=ILP_CLAUSE_SCORE,
        max_rows_per_group=k, random_state=seed,
    )  # fmt: skip
    est.fit(A, y, groups=g if groups else None)
    return float((est.predict(At) == yt).mean())


def run(seeds=5):
    """Rows ``(task, n_patients, eps, {method: median})`` (k-median: mean held-out
    distance, lower is better; ILP: held-out accuracy)."""
    rows = []
    for n, eps in SETTINGS:
        out = {(t, m): [] for t in ("k-median", "ILP") for m in METHODS}
        for seed in range(seeds):
            X, _, event, g = make_longitudinal_ehr(
                n, mean_visits=MEAN_VISITS, max_visits=K_MAX, random_state=seed
            )
            Xt, _, et, _ = make_longitudinal_ehr(
                2000, mean_visits=MEAN_VISITS, max_visits=K_MAX, random_state=10_000 + seed
            )
            S, St, A, At = _scaled(X), _scaled(Xt), _atoms(X), _atoms(Xt)
            for m, (e, grouped, k) in _plans(eps).items():
                out[("k-median", m)].append(_kmedian(e, grouped, k, S, g, St, seed))
                out[("ILP", m)].append(_ilp(e, grouped, k, A, event, g, At, et, seed))
        for task in ("k-median", "ILP"):
            med = {m: float(np.median(out[(task, m)])) for m in METHODS}
            rows.append((task, n, eps, med))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    rows = run(args.seeds)
    print(f"### Median over {args.seeds} seeds, same per-patient epsilon\n")
    print("|task|patients|eps|" + "|".join(METHODS) + "|")
    print("|" + "---|" * (len(METHODS) + 3))
    for task, n, eps, med in rows:
        cells = "|".join(f"{med[m]:.4f}" for m in METHODS)
        print(f"|{task}|{n}|{eps:g}|{cells}|")
    print(
        f"\n{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}; "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )


if __name__ == "__main__":
    main()
