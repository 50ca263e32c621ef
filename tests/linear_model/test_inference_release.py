"""DPLinearRegression(inference=True): coef_ is the bias-corrected interval centre,
post-processing of the same releases (same plan, same budget)."""

import pickle

import numpy as np
import pytest

from skdp.linear_model import DPLinearRegression


def _data(n=3000, seed=0, beta=(0.5, -0.3), intercept=0.1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, len(beta)))
    return X, X @ np.asarray(beta) + intercept + rng.standard_normal(n)


def _fit(X, y, groups=None, **kw):
    params = {"epsilon": 1.0, "bounds_X": (-4, 4), "bounds_y": (-6, 6), "random_state": 0}
    return DPLinearRegression(**{**params, **kw}).fit(X, y, groups=groups)


def test_default_is_false_and_unchanged():
    X, y = _data()
    assert DPLinearRegression().inference is False
    plain = _fit(X, y)
    explicit = _fit(X, y, inference=False)
    np.testing.assert_array_equal(plain.coef_, explicit.coef_)
    assert plain.intercept_ == explicit.intercept_
    assert not hasattr(plain, "released_coef_")  # the default fit has no new attribute


def test_plan_is_the_default_plan_and_sums_to_the_total():
    X, y = _data()
    reg = _fit(X, y, inference=True)
    plain = _fit(X, y)
    assert reg.privacy_breakdown_ == plain.privacy_breakdown_
    assert sum(reg.privacy_breakdown_.values()) == pytest.approx(reg.epsilon_spent_)
    assert reg.epsilon_spent_ == pytest.approx(1.0)


def test_coef_is_the_interval_centre_and_post_processing_only():
    X, y = _data()
    reg = _fit(X, y, inference=True)
    spent = (reg.epsilon_spent_, reg.delta_spent_)
    ci = reg.conf_int()
    centre = np.append(reg.coef_, reg.intercept_)
    np.testing.assert_allclose(ci.mean(axis=1), centre, rtol=1e-10, atol=1e-12)
    assert (reg.epsilon_spent_, reg.delta_spent_) == spent
    # the correction undoes (part of) the ridge's shrinkage: larger slopes
    assert np.all(np.abs(reg.coef_) >= np.abs(reg.released_coef_) - 1e-12)
    table = reg.summary()
    np.testing.assert_allclose(table["coef"].to_numpy(), centre)


def test_pickled_model_works_with_data_gone():
    X, y = _data()
    reg = _fit(X, y, inference=True)
    expected = reg.conf_int()
    del X, y
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_allclose(again.conf_int(), expected)
    np.testing.assert_array_equal(again.coef_, reg.coef_)


def test_groups_with_inference():
    X, y = _data(n=2000)
    groups = np.repeat(np.arange(1000), 2)
    reg = _fit(X, y, groups=groups, inference=True, max_rows_per_group=2)
    assert reg.privacy_unit_ == "group"
    assert reg.released_coef_ is not None
    ci = reg.conf_int()
    assert np.all(np.isfinite(ci)) and np.all(ci[:, 0] < ci[:, 1])


def test_epsilon_inf_and_mean_only_keep_the_estimate():
    X, y = _data()
    reg = DPLinearRegression(epsilon=np.inf, bounds_X=(-4, 4), bounds_y=(-6, 6), inference=True)
    reg.fit(X, y)
    assert reg.released_coef_ is None  # ordinary least squares: nothing to correct
    tiny = _fit(X[:50], y[:50], epsilon=0.01, inference=True)
    assert tiny.released_coef_ is None


def test_refit_without_inference_drops_the_released_estimate():
    X, y = _data()
    reg = _fit(X, y, inference=True)
    reg.set_params(inference=False).fit(X, y)
    assert not hasattr(reg, "released_coef_")
    np.testing.assert_array_equal(reg.coef_, _fit(X, y).coef_)


@pytest.mark.parametrize("bad", ["yes", 1, None, 0.5])
def test_inference_must_be_boolean(bad):
    X, y = _data(n=200)
    with pytest.raises((ValueError, TypeError), match="inference"):
        DPLinearRegression(epsilon=1.0, bounds_X=(-4, 4), bounds_y=(-6, 6), inference=bad).fit(X, y)


def test_inference_false_is_out_of_the_seed_material():
    X, y = _data(n=500)
    a = _fit(X, y)
    b = _fit(X, y, inference=False)
    np.testing.assert_array_equal(a.released_statistics_["gram"], b.released_statistics_["gram"])
    # True enters the seed material (as for DPLogisticRegression): another noise draw
    c = _fit(X, y, inference=True)
    assert not np.array_equal(a.released_statistics_["gram"], c.released_statistics_["gram"])
