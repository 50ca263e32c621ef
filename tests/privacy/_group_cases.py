"""Patient-level configurations per estimator class name, for the group audit
(:func:`skdp.auditing.group_audit`) and the bad-``groups`` checks.

Each case: ``make(k)`` builds the estimator with ``max_rows_per_group=k`` (``k=None``:
the row-level fit of the same configuration), ``data()`` gives ``(X, y, groups,
canary_X, canary_y)`` -- ``D0`` (one row per patient) and the canary patient's ``K``
rows, a worst case for the release the ``score`` reads -- ``score`` is
``callable(estimator, canary_X, canary_y)`` (or ``"auto"``), ``n_trials`` the number of
fits and ``slow`` whether the audit runs only under ``-m slow``. The cases of
``test_group_audit.py`` (linear models, scaler, imputer) and of
``test_group_audit_flow.py`` (``DPFlowDensity``) are not repeated here.

The torch-model cases (``DPFlowVI``, ``DPGANSynthesizer``, ``ExpMFlow*``) are smoke
tests of the plumbing: at these trial counts the audit has no power against them (their
row-level fits also stay below 1: 0.15-0.19 for ``ExpMFlow*``, 0 for the GAN); the
DP-SGD engine's patient-level control is ``test_attack_patient_level_dpsgd.py``, Cox's
``tests/survival/test_cox_privacy.py``.
"""

from __future__ import annotations

import numpy as np

from skdp.cluster import SubsampledExpMedian
from skdp.ilp import DPILPClassifier
from skdp.linear_model import ExpMFlowClassifier, ExpMFlowRegressor
from skdp.sampling import DPFlowVI
from skdp.survival import (
    DPAalenJohansen,
    DPCoxPH,
    DPKaplanMeier,
    make_competing_risks_target,
    make_survival_target,
)
from skdp.synthesis import DPGANSynthesizer, DPHistogramSynthesizer, DPMarginalSynthesizer

K, EPSILON = 5, 1.0
LEVELS = ["a", "b", "c"]


def _levels_data(n=60):
    """Rows in the levels a and b; the canary patient has K rows in the level c."""
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"v": rng.choice(["a", "b"], n)})
    return X, None, np.arange(n), pd.DataFrame({"v": ["c"] * K}), None


def _constant(fn):
    """A release-reading score: the released number ``fn(estimator)`` for every row."""

    def score(est, Xc, yc):
        return np.full(len(Xc), float(fn(est)))

    return score


def _histogram_count(est):
    h = est.histograms_[0]
    return h["counts"][h["cells"] == LEVELS.index("c")].sum()  # 0 when filtered out


def _kmedian_data():
    """20 points at 0.5 (equal cost for both public centres 0 and 1) and 2 at 1; the
    canary patient adds K rows at 1, moving the quality gap by K diameters."""
    X = np.r_[np.full(20, 0.5), np.ones(2)][:, None]
    return X, None, np.arange(len(X)), np.ones((K, 1)), None


def _ilp_data():
    """200 rows, half positive; the canary patient adds K positive rows (coverage +K)."""
    X = np.ones((200, 1), dtype=int)
    y = np.r_[np.ones(100), np.zeros(100)].astype(int)
    return X, y, np.arange(200), np.ones((K, 1), dtype=int), np.ones(K, dtype=int)


def _ilp_coverage(est):
    cov = est.clause_noisy_coverage_
    return cov[0] if len(cov) else 0.0


def _survival_times(n=150):
    rng = np.random.default_rng(0)
    return rng.random(n) < 0.7, rng.uniform(2.0, 10.0, n)  # nobody leaves in (0, 1]


def _km_data():
    event, time = _survival_times()
    canary = make_survival_target(np.ones(K, bool), np.full(K, 0.5))
    return make_survival_target(event, time), None, np.arange(len(time)), canary, None


def _aj_data():
    event, time = _survival_times()
    canary = make_competing_risks_target(np.ones(K, int), np.full(K, 0.5))
    y = make_competing_risks_target(event.astype(int), time)
    return y, None, np.arange(len(time)), canary, None


def _cox_data(n=200):
    """K episodes of one patient at the top of the box, each failing at once."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.2, 0.2, (n, 1))
    t = rng.exponential(5.0, n)
    y = make_survival_target(t < 10, np.minimum(t, 10))
    canary = make_survival_target(np.ones(K, bool), np.full(K, 0.01))
    return X, y, np.arange(n), np.ones((K, 1)), canary


def _location_data(n=20):
    X = 0.3 * np.random.default_rng(0).standard_normal((n, 2))
    return X, None, np.arange(n), np.full((K, 2), 5.0), None


def _far_classification(n=30):
    """A far, mislabelled canary patient moves the exponential mechanism's optimum."""
    X = np.random.default_rng(0).standard_normal((n, 2))
    y = (X[:, 0] > 0).astype(int)
    return X, y, np.arange(n), np.tile([3.0, 0.0], (K, 1)), np.zeros(K, dtype=int)


def _far_regression(n=60):
    X = np.random.default_rng(0).standard_normal((n, 2))
    y = np.clip(0.5 + 0.2 * X[:, 0], 0, 1)
    return X, y, np.arange(n), np.tile([3.0, 3.0], (K, 1)), np.zeros(K)


def _unit_square(n=100):
    X = 0.25 * np.random.default_rng(0).random((n, 2))
    return X, None, np.arange(n), np.ones((K, 2)), None


_TORCH = {"device": "cpu", "dtype": "float64"}
_EXPM = {"n_iter": 50, "batch_size": 32, "n_layers": 1, **_TORCH}


def _case(make, data, score="auto", n_trials=400, slow=False):
    return {"make": make, "data": data, "score": score, "n_trials": n_trials, "slow": slow}


CASES = {
    "DPHistogramSynthesizer": _case(
        lambda k: DPHistogramSynthesizer(
            epsilon=EPSILON, categories={"v": LEVELS}, threshold=0.0, max_rows_per_group=k
        ),
        _levels_data,
        _constant(_histogram_count),
    ),
    "DPMarginalSynthesizer": _case(
        lambda k: DPMarginalSynthesizer(
            epsilon=EPSILON,
            delta=0.0,
            categories={"v": LEVELS},
            compress=False,
            max_rows_per_group=k,
        ),
        _levels_data,
        _constant(lambda est: est.noisy_one_way_["v"][LEVELS.index("c")]),
    ),
    "SubsampledExpMedian": _case(
        lambda k: SubsampledExpMedian(
            n_clusters=1,
            epsilon=EPSILON,
            candidates=np.array([[0.0], [1.0]]),
            n_candidates=None,
            max_rows_per_group=k,
        ),
        _kmedian_data,
        _constant(lambda est: est.cluster_centers_[0, 0]),
    ),
    "DPILPClassifier": _case(
        lambda k: DPILPClassifier(epsilon=EPSILON, max_clause_length=0, max_rows_per_group=k),
        _ilp_data,
        _constant(_ilp_coverage),
    ),
    "DPKaplanMeier": _case(
        lambda k: DPKaplanMeier(
            epsilon=EPSILON, max_time=10.0, n_intervals=10, n_bootstrap=0, max_rows_per_group=k
        ),
        _km_data,
        _constant(lambda est: est.at_risk_[0] * (1.0 - est.survival_function_[1])),
    ),
    "DPAalenJohansen": _case(
        lambda k: DPAalenJohansen(
            epsilon=EPSILON, max_time=10.0, n_intervals=10, n_bootstrap=0, max_rows_per_group=k
        ),
        _aj_data,
        _constant(lambda est: est.cumulative_incidence_[1, 0]),
    ),
    "DPCoxPH": _case(
        lambda k: DPCoxPH(
            epsilon=EPSILON,
            bounds_X=(-1.0, 1.0),
            max_time=10.0,
            n_intervals=4,
            max_rows_per_group=k,
        ),
        _cox_data,
        _constant(lambda est: est.coef_[0]),
    ),
    "DPFlowVI": _case(
        lambda k: DPFlowVI(
            epsilon=EPSILON,
            delta=1e-5,
            n_iter=30,
            batch_size=21,
            n_mc=16,
            learning_rate=0.05,
            max_rows_per_group=k,
            **_TORCH,
        ),
        _location_data,
        n_trials=100,
        slow=True,
    ),
    "DPGANSynthesizer": _case(
        lambda k: DPGANSynthesizer(
            epsilon=EPSILON,
            delta=1e-5,
            bounds=(0.0, 1.0),
            n_iter=20,
            batch_size=32,
            hidden_size=16,
            latent_dim=8,
            max_rows_per_group=k,
            **_TORCH,
        ),
        _unit_square,
        n_trials=40,
        slow=True,
    ),
    "ExpMFlowClassifier": _case(
        lambda k: ExpMFlowClassifier(
            epsilon=EPSILON, classes=[0, 1], max_rows_per_group=k, **_EXPM
        ),
        _far_classification,
        n_trials=100,
        slow=True,
    ),
    "ExpMFlowRegressor": _case(
        lambda k: ExpMFlowRegressor(
            epsilon=EPSILON, bounds_y=(0.0, 1.0), max_rows_per_group=k, **_EXPM
        ),
        _far_regression,
        n_trials=100,
        slow=True,
    ),
}
