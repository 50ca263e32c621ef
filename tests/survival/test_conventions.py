"""The survival estimators in scikit-learn's tooling, with a survival target.

scikit-learn's common checks (``tests/test_common.py``) cannot build a structured
``(event, time)`` target, so the checks that fit are expected failures there. Here:

* every scikit-learn check runs on :class:`~skdp.survival.DPCoxPH` through a test-only
  subclass that turns the check's plain ``y`` into a survival target (the features, the
  parameters and every method are the model's own);
* the survival curves (``fit(y)`` only) get the checks that apply to a target: ``fit``
  returns ``self``, is idempotent for a fixed seed and does not depend on the row order,
  leaves the parameters and the target untouched, reads a read-only target; the fitted
  curve survives ``clone``/``pickle`` and the unfitted one raises ``NotFittedError``;
* :class:`~skdp.survival.DPCoxPH` behind a DP preprocessing step in scikit-learn's
  ``Pipeline`` and skdp's ``DPPipeline`` (with ``groups``), cloned and pickled.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.exceptions import DeltaTooLargeWarning
from skdp.pipeline import make_dp_pipeline
from skdp.preprocessing import DPStandardScaler
from skdp.survival import (
    DPAalenJohansen,
    DPCoxPH,
    DPKaplanMeier,
    make_competing_risks_target,
    make_survival_target,
)


def _as_survival(y):
    """A survival target from a check's plain ``y`` (a structured one passes as is):
    time ``|y| mod 10``, two events in three rows."""
    if y is None or (isinstance(y, np.ndarray) and y.dtype.names):
        return y
    values = np.asarray(y)
    if values.dtype.kind in "biuf":
        t = np.abs(values.astype(np.float64).ravel()) % 10.0
    else:  # string labels: their position
        t = np.arange(values.shape[0], dtype=np.float64) % 10.0
    return make_survival_target(np.arange(t.size) % 3 != 0, t)


class CoxOnPlainTarget(DPCoxPH):
    """DPCoxPH for scikit-learn's checks: a plain ``y`` becomes a survival target."""

    def fit(self, X, y, *, groups=None):
        return super().fit(X, _as_survival(y), groups=groups)

    def score(self, X, y):
        return super().score(X, _as_survival(y))


_COX = {"bounds_X": (-100.0, 100.0), "max_time": 10.0, "n_intervals": 3, "n_iter": 3}


@parametrize_with_checks([CoxOnPlainTarget(epsilon=1e6, random_state=0, **_COX)])
def test_cox_passes_sklearn_checks_with_a_survival_target(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeltaTooLargeWarning)
        check(estimator)


# ------------------------------------------------------------------ survival curves
def _survival_target(n=300, seed=0):
    rng = np.random.default_rng(seed)
    t_event, t_cens = rng.exponential(8.0, n), rng.uniform(0.0, 15.0, n)
    return make_survival_target(t_event <= t_cens, np.minimum(t_event, t_cens))


def _competing_target(n=300, seed=0):
    rng = np.random.default_rng(seed)
    t1, t2, c = rng.exponential(10.0, n), rng.exponential(20.0, n), rng.uniform(0, 15, n)
    event = np.where(np.minimum(t1, t2) > c, 0, np.where(t1 < t2, 1, 2))
    return make_competing_risks_target(event, np.minimum(np.minimum(t1, t2), c))


CURVES = {
    "DPKaplanMeier": (DPKaplanMeier, _survival_target, "survival_function_"),
    "DPAalenJohansen": (DPAalenJohansen, _competing_target, "cumulative_incidence_"),
}


def _curve(name, **params):
    cls, target, attr = CURVES[name]
    kw = {"epsilon": 1.0, "max_time": 10.0, "n_intervals": 5, "n_bootstrap": 10}
    return cls(**(kw | {"random_state": 0} | params)), target(), attr


@pytest.mark.parametrize("name", sorted(CURVES))
def test_curve_fit_returns_self_is_idempotent_and_keeps_its_inputs(name):
    est, y, attr = _curve(name)
    params, y_copy = est.get_params(), y.copy()
    assert est.fit(y) is est
    first = getattr(est, attr).copy()
    assert est.fit(y) is est
    np.testing.assert_array_equal(getattr(est, attr), first)
    assert est.get_params() == params, "fit changed a parameter"
    np.testing.assert_array_equal(y, y_copy)
    before = {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in vars(est).items()}
    est.predict([1.0, 5.0])
    est.predict_interval([1.0, 5.0])
    assert set(vars(est)) == set(before), "predict added attributes"
    for key, value in before.items():
        np.testing.assert_array_equal(vars(est)[key], value, err_msg=key)


@pytest.mark.parametrize("name", sorted(CURVES))
def test_curve_release_does_not_depend_on_the_row_order(name):
    est, y, attr = _curve(name)
    shuffled = y[np.random.default_rng(1).permutation(y.shape[0])]
    a = getattr(clone(est).fit(y), attr)
    b = getattr(clone(est).fit(shuffled), attr)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CURVES))
def test_curve_reads_a_read_only_target(name):
    est, y, attr = _curve(name)
    expected = getattr(clone(est).fit(y), attr)
    y.flags.writeable = False
    np.testing.assert_array_equal(getattr(est.fit(y), attr), expected)


@pytest.mark.parametrize("name", sorted(CURVES))
def test_curve_clone_pickle_and_not_fitted(name):
    est, y, attr = _curve(name)
    with pytest.raises(NotFittedError):
        est.predict([1.0])
    est.fit(y)
    twin = clone(est)
    assert twin.get_params() == est.get_params() and not hasattr(twin, attr)
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.predict([0.5, 3.0, 10.0]), est.predict([0.5, 3.0, 10.0]))
    assert restored.privacy_breakdown_ == est.privacy_breakdown_
    assert restored.noise_scale_ == est.noise_scale_ == {"histogram": 1.0}


@pytest.mark.parametrize("name", sorted(CURVES))
def test_curve_pickle_drops_a_generator_seed(name):
    """A pickle holds None in place of a generator (doc/glossary.rst, random_state)."""
    est, y, _ = _curve(name, random_state=np.random.default_rng(3))
    restored = pickle.loads(pickle.dumps(est.fit(y)))
    assert restored.random_state is None


# ------------------------------------------------------------------- Cox in tooling
def _cox_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 2)) * [1.0, 10.0]
    t = rng.exponential(1.0 / (0.2 * np.exp(X @ [1.0, -0.05])))
    return X, make_survival_target(t < 10.0, np.minimum(t, 10.0))


def _scaler(**kw):
    return DPStandardScaler(epsilon=0.5, bounds=([-1.0, -10.0], [1.0, 10.0]), **kw)


def _cox(**kw):
    return DPCoxPH(epsilon=1.0, bounds_X=(-5.0, 5.0), max_time=10.0, **kw)


@pytest.mark.parametrize("make", [make_pipeline, make_dp_pipeline])
def test_cox_behind_a_dp_scaler_in_a_pipeline(make):
    X, y = _cox_data()
    pipe = make(_scaler(random_state=0), _cox(random_state=1)).fit(X, y)
    assert pipe.score(X, y) > 0.6
    assert pipe[-1].coef_[0] > 0
    restored = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(restored.predict(X), pipe.predict(X))
    refit = clone(pipe).fit(X, y)  # same seeds: the same release
    np.testing.assert_array_equal(refit.predict(X), pipe.predict(X))
    surv = pipe[-1].predict_survival_function(pipe[:-1].transform(X[:3]), [1.0, 5.0])
    assert surv.shape == (3, 2) and np.all((surv > 0) & (surv <= 1))
    if make is make_dp_pipeline:
        assert pipe.epsilon_spent_ == pytest.approx(1.5)


def test_cox_dp_pipeline_with_groups_is_per_patient():
    X, y = _cox_data()
    groups = np.repeat(np.arange(X.shape[0] // 2), 2)
    pipe = make_dp_pipeline(
        _scaler(max_rows_per_group=2, random_state=0), _cox(max_rows_per_group=2, random_state=1)
    )
    pipe.fit(X, y, groups=groups)
    assert pipe.privacy_unit_ == "group"
    assert pipe[-1].privacy_unit_ == "group" and pipe[-1].max_rows_per_group_ == 2
    assert pipe.epsilon_spent_ == pytest.approx(1.5)


@pytest.mark.parametrize("name", sorted(CURVES))
def test_curve_grid_is_time_grid_and_timeline_is_deprecated(name):
    """One spelling of the grid edges across skdp.survival: ``time_grid_`` (the resolved
    ``time_grid``, as DPCoxPH); the old ``timeline_`` reads it with a FutureWarning."""
    est, y, _ = _curve(name)
    with pytest.raises(AttributeError):
        _ = est.timeline_
    est.fit(y)
    assert "timeline_" not in vars(est)
    with pytest.warns(FutureWarning, match="time_grid_"):
        old = est.timeline_
    np.testing.assert_array_equal(old, est.time_grid_)
    np.testing.assert_array_equal(est.time_grid_, np.linspace(0.0, 10.0, est.time_grid_.size))
