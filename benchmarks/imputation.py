"""DP mean imputation against a public constant.

When is ``DPSimpleImputer(strategy="mean")`` (a noisy mean at a share of the budget) worth
it over ``strategy="constant"`` (a public fill value, free)? Two public tables with
missingness injected completely at random into three columns (``--rate``, default 20 %
of the rows per column); the rest of the pipeline is fixed:

* ``diabetes``: ``load_diabetes(scaled=False)`` (442 rows, 10 features), target the
  disease progression (declared 25-346), ``DPLinearRegression``, test R^2; missing in
  ``bmi``, ``bp``, ``s5``. Bounds: the clinical ranges of the README.
* ``breast_cancer``: ``load_breast_cancer`` (569 rows, 30 features), ``DPLogisticRegression
  (mechanism="objective")``, test ROC AUC; missing in ``mean radius``, ``mean texture``,
  ``worst concave points``. Bounds: the data set's documented min/max (as in
  ``logistic_regression.py``; they favour every method equally).

Imputers (all inside a ``DPPipeline``; the model gets the rest of the budget):

* ``constant``: the midpoint of each declared range (public, 0 budget; model: all of epsilon).
* ``dp-mean 10%``: ``DPSimpleImputer(strategy="mean", epsilon=0.1 * eps)`` on the three
  columns with missing values only (a ``ColumnTransformer``); model: 0.9 * eps.
* ``dp-mean 10% all``: the same on every column (what a pipeline with one imputer in front
  does); the noise of its sums grows with the number of columns it covers.
* ``mean (leaky)``: scikit-learn's ``SimpleImputer`` - NOT private, the ceiling.

Reported: median test score over ``--seeds`` (new split, missingness and noise per
seed), and the imputation error on the missing cells (median over seeds of the RMS error
of the fill value, in units of the declared range width). Run::

    python benchmarks/imputation.py --seeds 20
"""

from __future__ import annotations

import argparse
import re
import time
import warnings

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.impute import SimpleImputer
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import train_test_split

from skdp.linear_model import DPLinearRegression, DPLogisticRegression
from skdp.pipeline import DPPipeline
from skdp.preprocessing import DPSimpleImputer, RowwiseFunctionTransformer

EPSILONS = (0.3, 1.0, 3.0)
DIABETES_BOUNDS = (
    np.array([18, 1, 15, 50, 80, 30, 15, 1, 3, 50], dtype=float),
    np.array([90, 2, 50, 150, 320, 260, 110, 10, 7, 150], dtype=float),
)


def diabetes():
    X, y = load_diabetes(scaled=False, return_X_y=True)
    return X, y, DIABETES_BOUNDS, [2, 3, 8], "regression"


def breast_cancer():
    data = load_breast_cancer()
    rows = re.findall(r"^([a-z ]+\([a-z ]+\)):\s+([\d.]+)\s+([\d.]+)\s*$", data.DESCR, re.M)
    lo = np.array([float(r[1]) for r in rows])
    hi = np.array([float(r[2]) for r in rows])
    return data.data, data.target, (lo, hi), [0, 1, 27], "classification"


TABLES = {"diabetes": diabetes, "breast_cancer": breast_cancer}


def _model(task, eps, bounds, seed):
    if task == "regression":
        return DPLinearRegression(
            epsilon=eps, bounds_X=bounds, bounds_y=(25, 346), random_state=seed
        )
    return DPLogisticRegression(
        epsilon=eps, bounds_X=bounds, classes=[0, 1], mechanism="objective", random_state=seed
    )


def _imputer(kind, eps, bounds, cols, d, seed):
    lo, hi = bounds
    if kind == "constant":
        return DPSimpleImputer(strategy="constant", fill_value=list((lo + hi) / 2))
    if kind == "mean (leaky)":
        return SimpleImputer(strategy="mean")
    share = 0.1 * eps
    if kind == "dp-mean 10% all":
        return DPSimpleImputer(epsilon=share, bounds=(lo, hi), random_state=seed)
    rest = [j for j in range(d) if j not in cols]
    imp = DPSimpleImputer(epsilon=share, bounds=(lo[cols], hi[cols]), random_state=seed)
    # the imputed columns first, then the others: reorder the bounds to match
    # remainder: the identity declared row-wise (DPPipeline refuses scikit-learn's
    # "passthrough", a FunctionTransformer, as a step that may learn from the batch)
    ct = ColumnTransformer([("imp", imp, cols)], remainder=RowwiseFunctionTransformer())
    return ct, cols + rest


KINDS = ("constant", "dp-mean 10%", "dp-mean 10% all", "mean (leaky)")


def run_cell(table, kind, eps, seed, rate):
    X, y, bounds, cols, task = TABLES[table]()
    rng = np.random.default_rng(seed)
    X = X.astype(float).copy()
    d = X.shape[1]
    truth = X.copy()
    for j in cols:
        X[rng.random(len(X)) < rate, j] = np.nan
    strat = y if task == "classification" else None
    X_tr, X_te, y_tr, y_te, T_tr, _ = train_test_split(
        X, y, truth, test_size=0.25, random_state=seed, stratify=strat
    )
    imp = _imputer(kind, eps, bounds, cols, d, seed)
    order = list(range(d))
    if isinstance(imp, tuple):
        imp, order = imp
    lo, hi = bounds
    model_bounds = (lo[order], hi[order])
    model_eps = eps if kind in ("constant", "mean (leaky)") else 0.9 * eps
    model = _model(task, model_eps, model_bounds, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "mean (leaky)":
            from sklearn.pipeline import Pipeline

            pipe = Pipeline([("imp", imp), ("model", model)]).fit(X_tr, y_tr)
        else:
            pipe = DPPipeline([("imp", imp), ("model", model)]).fit(X_tr, y_tr)
            assert abs(pipe.epsilon_spent_ - eps) < 1e-9, pipe.epsilon_spent_
        filled = np.asarray(pipe[0].transform(X_tr), dtype=float)
    back = np.empty_like(filled)
    back[:, order] = filled
    miss = np.isnan(X_tr)
    width = (hi - lo)[None, :]
    err = ((back - T_tr) / width)[miss]
    rmse = float(np.sqrt(np.mean(err**2)))
    if task == "regression":
        score = r2_score(y_te, pipe.predict(X_te))
    else:
        score = roc_auc_score(y_te, pipe.decision_function(X_te))
    return score, rmse


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--rate", type=float, default=0.2)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    print(f"{'table':<14} {'imputer':<16}" + "".join(f"{'eps=' + str(e):>22}" for e in EPSILONS))
    for table in TABLES:
        for kind in KINDS:
            cells = []
            for eps in EPSILONS:
                res = np.array(
                    [run_cell(table, kind, eps, s, args.rate) for s in range(args.seeds)]
                )
                cells.append(f"{np.median(res[:, 0]):8.3f} (err {np.median(res[:, 1]):.3f})")
            print(f"{table:<14} {kind:<16}" + "".join(f"{c:>22}" for c in cells))
    print(f"# {args.seeds} seeds, missing rate {args.rate}, {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
