"""Benchmark: a search under one total against no search.

Does tuning pay when the search and the untuned model are charged the same total? And
how far is ``best_score_`` (the maximum of the candidates' noisy scores) from the
winner's test AUC, against ``best_score_unbiased_`` (one DP score on held-out rows)?

Model: ``DPLogisticRegression(mechanism="objective", delta=0)`` (pure epsilon-DP,
pinned so that the comparison does not move with the default mechanism), declared
bounds from ``benchmarks/logistic_regression.py``. Per public table and total ``T``
(replace one row, the relation every search reports):

* ``untuned T/2``: one fit at ``epsilon = T/2`` (add/remove), i.e. the **same total**
  ``T`` under replace-one, default ``C = 1``;
* ``untuned T``: one fit at ``epsilon = T`` (what a newcomer compares: the same number);
* ``grid``: ``DPGridSearchCV(..., {"C": [0.1, 1, 10, 100]}, epsilon=T, cv=5)`` scored
  by ``make_dp_scorer("roc_auc", epsilon=1)`` (the split rule sets every fit's and
  score's budget from ``T``);
* ``private``: the same with ``selection=PrivateSelection(eta=0)``;
* ``grid+holdout``: ``grid`` with ``holdout=0.2`` (the selection and the refit on 80 %
  of the training rows; ``best_score_unbiased_`` on the other 20 %).

Each seed draws a new stratified 75/25 split and new noise. Cells: median test AUC of
the model over the seeds (non-private measurement on the test rows, for the benchmark
only). ``bias`` columns: mean over seeds of (reported score - the model's test AUC), for
``best_score_`` and ``best_score_unbiased_`` of ``grid+holdout``. Run
``OMP_NUM_THREADS=1 python benchmarks/search_total.py [--seeds 10]``; the measured table
and its reading are in ``doc/composition.rst`` ("When tuning pays").
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from logistic_regression import anes96, diabetes, fair  # noqa: E402

from skdp.linear_model import DPLogisticRegression  # noqa: E402
from skdp.metrics import make_dp_scorer  # noqa: E402
from skdp.model_selection import DPGridSearchCV, PrivateSelection  # noqa: E402

TABLES = {"diabetes": diabetes, "anes96": anes96, "fair": fair}
TOTALS = (1.0, 3.0, 10.0, 30.0, 100.0)
GRID = {"C": [0.1, 1.0, 10.0, 100.0]}


def _auc(model, X, y):
    return float(roc_auc_score(y, model.decision_function(X)))


def run_one(X, y, box, total, seed):
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
    base = dict(mechanism="objective", delta=0.0, bounds_X=box, classes=[0, 1])
    out = {}
    for name, eps in (("untuned T/2", total / 2), ("untuned T", total)):
        m = DPLogisticRegression(epsilon=eps, random_state=seed, **base).fit(X_tr, y_tr)
        out[name] = _auc(m, X_te, y_te)
    scorer = make_dp_scorer("roc_auc", epsilon=1.0, random_state=seed)
    common = dict(scoring=scorer, epsilon=total, cv=5, random_state=seed)
    est = DPLogisticRegression(random_state=seed, **base)
    runs = {
        "grid": {},
        "private": {"selection": PrivateSelection(eta=0.0)},
        "grid+holdout": {"holdout": 0.2},
    }
    for name, extra in runs.items():
        s = DPGridSearchCV(est, GRID, **common, **extra).fit(X_tr, y_tr)
        assert s.epsilon_spent_ <= total
        out[name] = _auc(s.best_estimator_, X_te, y_te)
        if name == "grid+holdout":
            out["bias best_score_"] = s.best_score_ - out[name]
            out["bias unbiased"] = s.best_score_unbiased_ - out[name]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--tables", nargs="*", default=list(TABLES))
    parser.add_argument("--totals", nargs="*", type=float, default=list(TOTALS))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the TuningBudgetWarning fires at small totals
    t0 = time.time()
    cols = ["untuned T/2", "untuned T", "grid", "private", "grid+holdout"]
    print(
        f"{'table':>9} {'n':>5} {'T':>5} "
        + " ".join(f"{c:>12}" for c in cols)
        + f" {'bias best':>10} {'bias unb.':>10}"
    )
    for tname in args.tables:
        loaded = TABLES[tname](0)
        if loaded is None:
            continue
        X, y, box = loaded
        ref = []
        for seed in range(args.seeds):
            X_tr, X_te, y_tr, y_te = train_test_split(
                X, y, test_size=0.25, stratify=y, random_state=seed
            )
            lo, hi = box

            def scale(A, lo=lo, hi=hi):
                return (np.clip(A, lo, hi) - lo) / (hi - lo)

            ref.append(
                roc_auc_score(
                    y_te,
                    LogisticRegression(max_iter=1000)
                    .fit(scale(X_tr), y_tr)
                    .decision_function(scale(X_te)),
                )
            )
        print(f"{tname:>9} {len(y):>5}  non-private LogisticRegression: {np.median(ref):.3f}")
        for total in args.totals:
            rows = [run_one(X, y, box, total, seed) for seed in range(args.seeds)]
            med = [np.median([r[c] for r in rows]) for c in cols]
            b1 = np.mean([r["bias best_score_"] for r in rows])
            b2 = np.mean([r["bias unbiased"] for r in rows])
            print(
                f"{tname:>9} {len(y):>5} {total:>5g} "
                + " ".join(f"{v:>12.3f}" for v in med)
                + f" {b1:>+10.3f} {b2:>+10.3f}",
                flush=True,
            )
    print(f"# {args.seeds} seeds, {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
