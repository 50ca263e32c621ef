"""Quickstart: a clinician's workflow, then every skdp estimator on scikit-learn's
bundled medical data.

One command::

    python examples/quickstart.py              # epsilon = 1 per release, about a minute
    python examples/quickstart.py --epsilon 5  # another budget
    python examples/quickstart.py --fast       # short DP-SGD runs, under a minute

Part 1 is the path a clinical analysis takes, on the diabetes data with an outcome
(progression above 140) and some missing BMI values: private preprocessing (a DP
imputer, a scaler from declared bounds) inside a :class:`~skdp.pipeline.DPPipeline`, a
:class:`~skdp.model_selection.DPGridSearchCV` that spends **one total** ``epsilon`` over all
its fits, scores and refit, and a synthetic copy of the table from
:class:`~skdp.synthesis.DPMarginalSynthesizer`. It prints what each step spent.

Part 2 fits each estimator at the stated ``epsilon`` (each row is one separate release
with its own total budget; ``delta`` = 1e-5 for the DP-SGD ones) and prints a table:
estimator, privacy spent, a utility measure of the DP result next to the same measure for
a non-private baseline, and the time taken.

Data: the diabetes data (442 patients, 10 baseline variables, disease progression after
one year) and the breast-cancer data (569 tumours, malignant or benign), both bundled
with scikit-learn. Every estimator needs *public* bounds on the numeric values (and, for
the synthesizers, the kinds of the columns). They must not be read off the private data.
Here they come from clinical domain knowledge about the unscaled diabetes variables and
from the documented range of the progression score (25 to 346); for the breast-cancer
measurements, from round-number ranges covering the documented feature ranges. Values
outside the bounds are clipped.

Utility measures (computed on held-out real data, which a data custodian would keep to
themselves; they are not private):

* regression: test ``R^2`` (``DPLinearRegression``; ``ExpMFlowRegressor``, whose guarantee
  is approximate, marked "approx." in the table);
* synthesizers: train on synthetic, test on real (TSTR) -- the ``R^2`` on the real test
  set of a linear regression fitted to the synthetic rows, against the same regression
  fitted to the real training rows;
* k-median: the k-median cost of the chosen centres (lower is better), against k-means
  centres fitted without privacy;
* rule learner: test accuracy, against the same rule search without noise;
* ExpM + flow classifier: test AUC, against a non-private logistic regression (its
  guarantee is approximate, marked "approx." in the table);
* DP AUC scorer: the released test AUC, against the exact AUC;
* logistic regression: test AUC, against a non-private logistic regression;
* marginal synthesizer: TSTR ``R^2`` as for the other synthesizers.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp.cluster import SubsampledExpMedian, kmedian_costs
from skdp.density import DPFlowDensity
from skdp.exceptions import ApproximateGuaranteeWarning, DeltaTooLargeWarning
from skdp.ilp import DPILPClassifier
from skdp.linear_model import (
    DPLinearRegression,
    DPLogisticRegression,
    ExpMFlowClassifier,
    ExpMFlowRegressor,
)
from skdp.metrics import dp_roc_auc_score, make_dp_scorer
from skdp.model_selection import DPGridSearchCV
from skdp.pipeline import make_dp_pipeline
from skdp.preprocessing import DPSimpleImputer, PublicBoundsScaler
from skdp.synthesis import DPGANSynthesizer, DPHistogramSynthesizer, DPMarginalSynthesizer

# Public bounds: plausible clinical ranges, declared before looking at the data.
FEATURE_BOUNDS = {
    "age": (18, 90),  # years (adult cohort)
    "sex": (1, 2),  # coded 1/2
    "bmi": (15, 50),  # kg/m^2
    "bp": (50, 150),  # mean arterial pressure, mmHg
    "s1": (80, 350),  # total serum cholesterol, mg/dL
    "s2": (30, 250),  # low-density lipoproteins, mg/dL
    "s3": (15, 110),  # high-density lipoproteins, mg/dL
    "s4": (1, 10),  # total cholesterol / HDL
    "s5": (3, 6.5),  # log of serum triglycerides
    "s6": (50, 150),  # blood sugar, mg/dL
}
TARGET_BOUNDS = (25, 346)  # documented range of the progression score
DELTA = 1e-5

# Breast cancer: round-number ranges covering the documented feature ranges.
TUMOUR_BOUNDS = {"mean radius": (5.0, 30.0), "mean texture": (5.0, 40.0)}
# Public cutoffs (round numbers fixed in advance) turning measurements into binary atoms.
CUTOFFS = {
    "mean radius": 15.0,
    "mean texture": 20.0,
    "mean concavity": 0.1,
    "mean concave points": 0.05,
    "worst radius": 17.0,
    "worst smoothness": 0.15,
    "worst concave points": 0.15,
    "worst symmetry": 0.3,
}


def _diabetes():
    data = load_diabetes(scaled=False, as_frame=True)
    X, y = data.data[list(FEATURE_BOUNDS)], data.target
    return train_test_split(X, y, test_size=0.25, random_state=0)


def _spent(est):
    out = f"{est.epsilon_spent_:.3g}"
    if getattr(est, "delta_spent_", 0.0):
        out += f", {est.delta_spent_:.0e}"
    return out + ("" if est.privacy_guarantee_ == "exact" else " (approx.)")


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


# ------------------------------------------------------------- part 1: a workflow
def workflow(eps, seed):
    """Preprocessing -> pipeline -> search under one total -> a synthetic table."""
    from sklearn.metrics import roc_auc_score

    X_tr, X_te, y_tr, y_te = _diabetes()
    # the outcome: progression above 140 (a public cutoff); some BMI values missing
    out_tr, out_te = (y_tr > 140).astype(int), (y_te > 140).astype(int)
    rng = np.random.default_rng(seed)
    X_tr = X_tr.astype(float)
    X_tr.loc[rng.random(len(X_tr)) < 0.1, "bmi"] = np.nan

    # 1. private preprocessing and a model, in one pipeline: every step's spend adds up
    pipe = make_dp_pipeline(
        DPSimpleImputer(strategy="constant", fill_value=27.0),  # a public typical BMI: free
        PublicBoundsScaler(bounds=FEATURE_BOUNDS),  # declared bounds onto [0, 1]: free
        DPLogisticRegression(bounds_X=(0, 1), classes=[0, 1]),
    )
    # 2. a search that spends one total: the fits, the DP scores and the refit
    total = 3.0 * eps
    search = DPGridSearchCV(
        pipe,
        {"dplogisticregression__C": [0.1, 1.0]},
        # under a total, the scorer's epsilon only weighs scoring against fitting
        scoring=make_dp_scorer("roc_auc", epsilon=1.0),
        epsilon=total,
        delta=DELTA,  # the logistic model may run DP-SGD, which spends delta
        cv=3,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the tuning-budget advice
        search.fit(X_tr, out_tr)
    auc = roc_auc_score(out_te, search.decision_function(X_te))
    print(f"Part 1. A search over C under one total epsilon = {total:g}:")
    print(
        f"  spent epsilon = {search.epsilon_spent_:.3g}, delta = {search.delta_spent_:.0e} "
        f"({search.privacy_guarantee_}), "
        f"best C = {search.best_params_['dplogisticregression__C']}, "
        f"test AUC of the refit = {auc:.3f}"
    )

    # 3. a synthetic copy of the table (the outcome included), for sharing
    table = X_tr.fillna(27.0).assign(outcome=out_tr)
    synth = DPMarginalSynthesizer(
        epsilon=eps,
        bounds={c: b for c, b in FEATURE_BOUNDS.items() if c != "sex"},
        column_types={"sex": "categorical", "age": "integer", "outcome": "binary"},
        categories={"sex": [1.0, 2.0]},
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeltaTooLargeWarning)
        fake = synth.fit(table).sample(len(table), random_state=seed)
    clf = LogisticRegression(max_iter=2000).fit(fake[list(FEATURE_BOUNDS)], fake["outcome"])
    tstr = roc_auc_score(out_te, clf.decision_function(X_te))
    print(
        f"  synthetic table: epsilon = {synth.epsilon_spent_:.3g}, {len(fake)} rows; a "
        f"model trained on it has test AUC {tstr:.3f}\n"
    )


# ------------------------------------------------------------ part 2: the estimators
def job_linear_regression(eps, seed, fast):
    X_tr, X_te, y_tr, y_te = _diabetes()
    lo = np.array([b[0] for b in FEATURE_BOUNDS.values()], dtype=float)
    hi = np.array([b[1] for b in FEATURE_BOUNDS.values()], dtype=float)
    est, dt = _timed(
        lambda: DPLinearRegression(
            epsilon=eps, bounds_X=(lo, hi), bounds_y=TARGET_BOUNDS, random_state=seed
        ).fit(X_tr, y_tr)
    )
    base = LinearRegression().fit(X_tr, y_tr).score(X_te, y_te)
    return "diabetes", est, "test R^2", est.score(X_te, y_te), base, dt


def job_expm_flow_regression(eps, seed, fast):
    X_tr, X_te, y_tr, y_te = _diabetes()
    lo = np.array([b[0] for b in FEATURE_BOUNDS.values()], dtype=float)
    hi = np.array([b[1] for b in FEATURE_BOUNDS.values()], dtype=float)

    def scale(X):  # public affine map of the declared bounds onto [0, 1], clipped
        return np.clip((X.to_numpy(float) - lo) / (hi - lo), 0, 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateGuaranteeWarning)  # shown in the table
        est, dt = _timed(
            lambda: ExpMFlowRegressor(
                epsilon=eps,
                bounds_y=TARGET_BOUNDS,
                n_iter=20 if fast else 100,
                n_diagnostic_samples=256,
                device="cpu",
                random_state=seed,
            ).fit(scale(X_tr), y_tr)
        )
    base = LinearRegression().fit(X_tr, y_tr).score(X_te, y_te)
    return "diabetes", est, "test R^2", est.score(scale(X_te), y_te), base, dt


def _tstr(make, eps, seed):
    """Fit a synthesizer on the diabetes training rows (target included), sample as many
    rows, and score a linear regression trained on them on the real test set."""
    X_tr, X_te, y_tr, y_te = _diabetes()
    train = X_tr.assign(target=y_tr)
    bounds = {**FEATURE_BOUNDS, "target": TARGET_BOUNDS}
    types = {c: "continuous" for c in train.columns} | {"age": "integer", "sex": "integer"}
    est, dt = _timed(lambda: make(bounds, types).fit(train))
    S = est.sample(len(train), random_state=seed)  # seeded: the row is reproducible
    reg = LinearRegression().fit(S[list(FEATURE_BOUNDS)], S["target"])
    base = LinearRegression().fit(X_tr, y_tr).score(X_te, y_te)
    return "diabetes", est, "TSTR R^2", reg.score(X_te, y_te), base, dt


def job_logistic(eps, seed, fast):
    from sklearn.metrics import roc_auc_score

    X_tr, X_te, y_tr, y_te = _diabetes()
    out_tr, out_te = (y_tr > 140).astype(int), (y_te > 140).astype(int)
    lo = np.array([b[0] for b in FEATURE_BOUNDS.values()], dtype=float)
    hi = np.array([b[1] for b in FEATURE_BOUNDS.values()], dtype=float)
    est, dt = _timed(
        lambda: DPLogisticRegression(
            epsilon=eps, bounds_X=(lo, hi), classes=[0, 1], random_state=seed
        ).fit(X_tr, out_tr)
    )
    base = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, out_tr)
    auc = roc_auc_score(out_te, est.decision_function(X_te))
    return "diabetes", est, "test AUC", auc, roc_auc_score(out_te, base.decision_function(X_te)), dt


def job_marginal(eps, seed, fast):
    return _tstr(
        lambda b, t: DPMarginalSynthesizer(
            epsilon=eps, bounds=b, column_types=t, random_state=seed
        ),
        eps,
        seed,
    )


def job_histogram(eps, seed, fast):
    return _tstr(
        lambda b, t: DPHistogramSynthesizer(
            epsilon=eps, bounds=b, column_types=t, representative="uniform", random_state=seed
        ),
        eps,
        seed,
    )


def job_flow(eps, seed, fast):
    # the estimator's defaults: batch size, step count, width and base all follow public
    # rules of n, d and epsilon (see the DPFlowDensity docstring); --fast only cuts steps
    return _tstr(
        lambda b, t: DPFlowDensity(
            epsilon=eps,
            delta=DELTA,
            bounds=b,
            column_types=t,
            n_iter=40 if fast else None,
            device="cpu",
            random_state=seed,
        ),
        eps,
        seed,
    )


def job_gan(eps, seed, fast):
    # the estimator's defaults (public rules of n and the model size), as for the flow
    return _tstr(
        lambda b, t: DPGANSynthesizer(
            epsilon=eps,
            delta=DELTA,
            bounds=b,
            column_types=t,
            n_iter=10 if fast else None,
            device="cpu",
            random_state=seed,
        ),
        eps,
        seed,
    )


def job_kmedian(eps, seed, fast):
    from sklearn.cluster import KMeans

    data = load_breast_cancer(as_frame=True)
    X = data.data[list(TUMOUR_BOUNDS)].to_numpy()
    (lo0, hi0), (lo1, hi1) = TUMOUR_BOUNDS.values()
    gx, gy = np.meshgrid(np.linspace(lo0, hi0, 21), np.linspace(lo1, hi1, 21))
    V = np.column_stack([gx.ravel(), gy.ravel()])  # public candidate centres
    est, dt = _timed(
        lambda: SubsampledExpMedian(n_clusters=3, epsilon=eps, candidates=V, random_state=seed).fit(
            X
        )
    )
    km = KMeans(3, n_init=10, random_state=0).fit(X).cluster_centers_
    cost = float(kmedian_costs(X, est.cluster_centers_[None])[0])
    base = float(kmedian_costs(X, km[None])[0])
    return "breast cancer", est, "k-median cost", cost, base, dt


def _atoms():
    data = load_breast_cancer(as_frame=True)
    atoms = pd.DataFrame(
        {f"{c} > {t:g}": (data.data[c] > t).astype(int) for c, t in CUTOFFS.items()}
    )
    malignant = (data.target == 0).astype(int)
    return train_test_split(atoms, malignant, test_size=0.3, random_state=0)


def job_ilp(eps, seed, fast):
    A_tr, A_te, y_tr, y_te = _atoms()
    kw = dict(n_clauses=2, max_clause_length=2)
    est, dt = _timed(lambda: DPILPClassifier(epsilon=eps, random_state=seed, **kw).fit(A_tr, y_tr))
    base = DPILPClassifier(epsilon=math.inf, **kw).fit(A_tr, y_tr).score(A_te, y_te)
    return "breast cancer", est, "test accuracy", est.score(A_te, y_te), base, dt


def job_expm_flow(eps, seed, fast):
    from sklearn.metrics import roc_auc_score

    data = load_breast_cancer(as_frame=True)
    # public scaling to [0, 1] by round-number ranges covering the documented ranges
    bounds = {"mean radius": (5.0, 30.0), "mean texture": (5.0, 40.0)}
    X = np.column_stack(
        [np.clip((data.data[c] - lo) / (hi - lo), 0, 1) for c, (lo, hi) in bounds.items()]
    )
    y = (data.target == 0).astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateGuaranteeWarning)  # shown in the table
        est, dt = _timed(
            lambda: ExpMFlowClassifier(
                epsilon=eps,
                classes=[0, 1],  # the public label set
                n_iter=20 if fast else 100,
                n_diagnostic_samples=256,
                device="cpu",
                random_state=seed,
            ).fit(X_tr, y_tr)
        )
    auc = roc_auc_score(y_te, est.predict_proba(X_te)[:, 1])
    base = roc_auc_score(y_te, LogisticRegression().fit(X_tr, y_tr).decision_function(X_te))
    return "breast cancer", est, "test AUC", auc, base, dt


class _Released:
    """Privacy attributes of a scorer call, for the table."""

    def __init__(self, eps, delta):
        self.epsilon_spent_, self.delta_spent_, self.privacy_guarantee_ = eps, delta, "exact"


def job_dp_auc(eps, seed, fast):
    data = load_breast_cancer()
    X_tr, X_te, y_tr, y_te = train_test_split(
        data.data, data.target, test_size=0.5, random_state=0, stratify=data.target
    )
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr)
    score = model.decision_function(X_te)
    from sklearn.metrics import roc_auc_score

    auc, dt = _timed(
        lambda: dp_roc_auc_score(y_te, score, epsilon=eps, delta=DELTA, random_state=seed)
    )
    rel = _Released(eps, DELTA)
    return "breast cancer", rel, "test AUC", auc, roc_auc_score(y_te, score), dt


JOBS = [
    ("DPLinearRegression", job_linear_regression),
    ("DPLogisticRegression", job_logistic),
    ("DPMarginalSynthesizer", job_marginal),
    ("ExpMFlowRegressor", job_expm_flow_regression),
    ("DPHistogramSynthesizer", job_histogram),
    ("DPFlowDensity", job_flow),
    ("DPGANSynthesizer", job_gan),
    ("SubsampledExpMedian", job_kmedian),
    ("DPILPClassifier", job_ilp),
    ("ExpMFlowClassifier", job_expm_flow),
    ("dp_roc_auc_score", job_dp_auc),
]


SYNTHESIZERS = (
    "DPMarginalSynthesizer",
    "DPHistogramSynthesizer",
    "DPFlowDensity",
    "DPGANSynthesizer",
)
WHICH_SYNTHESIZER = """
Which synthesizer when (doc/user_guide.rst, "Synthetic data and densities"; measured
in doc/benchmarks_synthesis.rst): DPMarginalSynthesizer for small and medium tables,
DPHistogramSynthesizer for a few columns (on this table it keeps the linear trend better,
the marginal model the pairwise marginals), DPFlowDensity (DP-SGD) only with thousands of
rows, and DPGANSynthesizer with conditional="acgan" where the rows are for predicting a
declared label (no size measured so far favours its unconditional default). Their rows above use
the estimators' defaults (public rules of n, d and epsilon): at 331 rows and a small
epsilon the DP-SGD noise swamps them, and the GAN's R^2 swings widely from seed to seed
(doc/benchmarks_synthesis.rst, "The quickstart's synthesizer rows")."""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epsilon", type=float, default=1.0, help="budget of each estimator")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fast", action="store_true", help="short DP-SGD runs")
    p.add_argument("--only", nargs="*", default=None, help="names of estimators to run")
    args = p.parse_args(argv)
    if not args.epsilon > 0:
        p.error("--epsilon must be positive")

    header = (
        f"{'data':<14} {'estimator':<23} {'eps (, delta)':<14} {'utility':<14} "
        f"{'DP':>8} {'non-private':>11} {'time (s)':>9}"
    )
    print(f"skdp quickstart: epsilon = {args.epsilon:g} per release, seed {args.seed}\n")
    if not args.only:
        workflow(args.epsilon, args.seed)
    print("Part 2. Each estimator on its own:\n")
    print(header)
    print("-" * len(header))
    rows = []
    for name, job in JOBS:
        if args.only and name not in args.only:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeltaTooLargeWarning)
            data, est, metric, value, base, dt = job(args.epsilon, args.seed, args.fast)
        rows.append((name, value, base))
        print(
            f"{data:<14} {name:<23} {_spent(est):<14} {metric:<14} "
            f"{value:>8.3f} {base:>11.3f} {dt:>9.3f}",
            flush=True,
        )
    print(
        "\nEach row is a separate release with its own total budget. With a few hundred "
        "patients, small budgets cost a lot of\nutility (R^2 can be negative); it grows "
        "with epsilon and with n. The utility columns read held-out real data\nand are "
        "not private. Public bounds: clinical ranges stated in this file, never computed "
        "from the data."
    )
    if any(name in SYNTHESIZERS for name, _, _ in rows):
        print(WHICH_SYNTHESIZER)
    return rows


if __name__ == "__main__":
    main()
