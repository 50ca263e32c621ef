"""DPCoxPH(inference=True): ``coef_`` released at the centre of the noise-aware interval,
by post-processing of the same releases (same plan, same budget)."""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest

from skdp.survival import DPCoxPH, make_survival_target
from skdp.survival._cox_inference import (
    POSTERIOR_N_EPSILON,
    _released_n_epsilon,
    interval_centre,
)

#: the estimator of every test (keywords override)
_cox = functools.partial(DPCoxPH, bounds_X=(-3, 3), max_time=10.0, random_state=0)


def _data(n=2000, seed=0):
    """Two features, hazard ratio exp(0.5) per unit of the first, none of the second;
    follow-up censored uniformly on (0, 15) and at the horizon 10."""
    rng = np.random.default_rng(seed)
    X = np.clip(rng.standard_normal((n, 2)), -3, 3)
    event_time = rng.exponential(10.0 * np.exp(-0.5 * X[:, 0]))
    censor = np.minimum(rng.uniform(0, 15, n), 10.0)
    return X, make_survival_target(event_time <= censor, np.minimum(event_time, censor))


def test_default_is_false_and_explicit_false_is_bit_identical():
    X, y = _data(800)
    assert DPCoxPH().get_params()["inference"] is False
    a, b = _cox(epsilon=1.0).fit(X, y), _cox(epsilon=1.0, inference=False).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.baseline_hazard_, b.baseline_hazard_)
    np.testing.assert_array_equal(a.conf_int(), b.conf_int())


@pytest.mark.parametrize("eps", [0.3, 3.0])
def test_plan_is_unchanged_and_its_breakdown_sums_to_the_total(eps):
    X, y = _data(1000)
    off, on = _cox(epsilon=eps).fit(X, y), _cox(epsilon=eps, inference=True).fit(X, y)
    assert on.epsilon_spent_ == off.epsilon_spent_ == eps
    assert on.delta_spent_ == off.delta_spent_
    assert on.privacy_breakdown_ == off.privacy_breakdown_
    assert on.rho_breakdown_ == off.rho_breakdown_
    assert on.noise_scale_ == off.noise_scale_
    assert sum(on.privacy_breakdown_.values()) == pytest.approx(eps, rel=1e-12)
    assert set(on.released_statistics_) == {"centre", "baseline", "hessian", "gradients"}


@pytest.mark.parametrize("n, eps", [(600, 0.5), (3000, 3.0)])
def test_coef_is_post_processing_of_the_releases(n, eps):
    """``coef_`` is a function of ``released_statistics_`` and public facts only: it is
    rebuilt from an unpickled model with the data gone, and conf_int is centred on it
    where the linearised interval is used."""
    X, y = _data(n)
    cox = _cox(epsilon=eps, inference=True).fit(X, y)
    coef, ci = cox.coef_.copy(), cox.conf_int()
    del X, y
    back = pickle.loads(pickle.dumps(cox))
    np.testing.assert_array_equal(interval_centre(back), coef)
    np.testing.assert_array_equal(back.conf_int(), ci)
    assert np.all(ci[:, 0] <= coef) and np.all(coef <= ci[:, 1])
    if _released_n_epsilon(back) >= POSTERIOR_N_EPSILON:
        np.testing.assert_allclose(ci.mean(axis=1), coef, rtol=0, atol=1e-12)
    table = back.summary()
    np.testing.assert_array_equal(table["coef"].to_numpy(), coef)


def test_baseline_moves_with_coef_at_the_released_mean(monkeypatch):
    """The hazard of a patient at the released mean of the features is unchanged by
    the move; only ``coef_`` and ``baseline_hazard_`` change (same noise: the same
    estimator with the move switched off)."""
    import skdp.survival._cox as cox_module

    X, y = _data(1500)
    moved = _cox(epsilon=0.5, inference=True).fit(X, y)
    monkeypatch.setattr(cox_module, "move_to_interval_centre", lambda est: None)
    path_end = _cox(epsilon=0.5, inference=True).fit(X, y)
    for key, value in path_end.released_statistics_.items():
        np.testing.assert_array_equal(moved.released_statistics_[key], value)
    assert not np.array_equal(moved.coef_, path_end.coef_)
    noisy = moved.released_statistics_["centre"]
    mean = np.clip(noisy[1:] / max(noisy[0], 1.0), -1, 1) * 3.0  # original units
    h_moved = moved.predict_cumulative_hazard_function(mean[None, :], [2.5, 10.0])
    h_end = path_end.predict_cumulative_hazard_function(mean[None, :], [2.5, 10.0])
    np.testing.assert_allclose(h_moved, h_end, rtol=1e-10)


def test_epsilon_inf_is_unchanged():
    X, y = _data(800)
    a = _cox(epsilon=np.inf).fit(X, y)
    b = _cox(epsilon=np.inf, inference=True).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.conf_int(), b.conf_int())


def test_groups_with_inference():
    X, y = _data(1200)
    groups = np.arange(1200) // 3
    cox = _cox(epsilon=1.0, inference=True, max_rows_per_group=2).fit(X, y, groups=groups)
    assert cox.privacy_unit_ == "group" and cox.max_rows_per_group_ == 2
    assert np.all(np.isfinite(cox.coef_))
    np.testing.assert_array_equal(interval_centre(cox), cox.coef_)
    ci = cox.conf_int()
    assert np.all(ci[:, 0] <= cox.coef_) and np.all(cox.coef_ <= ci[:, 1])
    assert sum(cox.privacy_breakdown_.values()) == pytest.approx(1.0, rel=1e-12)


def test_inference_enters_the_seed_material_only_when_true():
    """As logistic's ``inference``: ``False`` leaves the seed (and so every release)
    as before; ``True`` is a different estimator and draws other noise."""
    X, y = _data(800)
    a = _cox(epsilon=1.0).fit(X, y)
    b = _cox(epsilon=1.0, inference=True).fit(X, y)
    assert not np.array_equal(a.released_statistics_["hessian"], b.released_statistics_["hessian"])
    assert not hasattr(b, "random_state_") and not hasattr(b, "rng_")


@pytest.mark.parametrize("bad", ["yes", 1.5, None, "True"])
def test_bad_inference_is_refused_naming_it(bad):
    X, y = _data(200)
    with pytest.raises((ValueError, TypeError), match="inference"):
        _cox(epsilon=1.0, inference=bad).fit(X, y)


def test_a_centre_that_is_not_finite_is_refused_naming_inference(monkeypatch):
    """The guard of the move: should the interval's centre ever be NaN or infinite
    (not reached on any cohort measured), the fit raises a RuntimeError naming
    ``inference=True`` instead of releasing a NaN ``coef_``."""
    import skdp.survival._cox_inference as inference_module

    X, y = _data(600)
    monkeypatch.setattr(inference_module, "interval_centre", lambda est: np.full(2, np.nan))
    with pytest.raises(RuntimeError, match=r"inference=True"):
        _cox(epsilon=1.0, inference=True).fit(X, y)
    monkeypatch.setattr(inference_module, "interval_centre", lambda est: np.array([np.inf, 0.0]))
    with pytest.raises(RuntimeError, match=r"inference=True"):
        _cox(epsilon=1.0, inference=True).fit(X, y)
