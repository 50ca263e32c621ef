"""DPLogisticRegression(inference=True): the Fisher release inside the budget, and
conf_int / summary as post-processing (doc/inference.rst)."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from skdp.linear_model import DPLogisticRegression
from skdp.linear_model._inference_logistic import fisher_information
from skdp.linear_model._logistic_plan import INFERENCE_SHARE, LogisticPlan


def _data(n=2000, d=2, seed=0, coef=None):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    coef = np.r_[1.0, np.zeros(d - 1)] if coef is None else np.asarray(coef)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ coef + 0.2)))).astype(int)
    return X, y


def _fit(X, y, groups=None, **kw):
    params = dict(epsilon=1.0, classes=[0, 1], bounds_X=(-1, 1), random_state=0)
    params.update(kw)
    return DPLogisticRegression(**params).fit(X, y, groups=groups)


def test_without_inference_conf_int_refuses_and_nothing_is_added():
    X, y = _data()
    clf = _fit(X, y)
    assert not hasattr(clf, "released_statistics_")
    assert sorted(clf.privacy_breakdown_) == ["bounds", "objective"]
    assert sorted(clf.noise_scale_) == ["objective"]
    with pytest.raises(ValueError, match="inference=True"):
        clf.conf_int()
    with pytest.raises(ValueError, match="inference=True"):
        clf.summary()


def test_budget_share_inside_the_total_and_post_processing_only():
    X, y = _data()
    clf = _fit(X, y, epsilon=2.0, inference=True)
    bd = clf.privacy_breakdown_
    assert bd["fisher"] == pytest.approx(INFERENCE_SHARE * 2.0)
    assert sum(bd.values()) == pytest.approx(clf.epsilon_spent_)
    assert clf.epsilon_spent_ == 2.0
    assert clf.noise_scale_["fisher"] == pytest.approx(4.0 / (8 * INFERENCE_SHARE * 2.0))
    ci = clf.conf_int()
    assert ci.shape == (3, 2) and np.all(ci[:, 0] < ci[:, 1])
    assert clf.epsilon_spent_ == 2.0
    # no data after fit: the unpickled model gives the same interval (seed from releases)
    clone = pickle.loads(pickle.dumps(clf))
    del X, y
    np.testing.assert_array_equal(clone.conf_int(), ci)
    table = clone.summary()
    assert list(table.columns) == ["coef", "std err", "[0.025", "0.975]", "P>|z|"]
    np.testing.assert_allclose(table.iloc[:, 2:4].to_numpy(), ci)


def test_fisher_release_is_noisy_and_stored_in_scaled_units():
    X, y = _data(n=500)
    clf = _fit(X, y, inference=True)
    H = clf.released_statistics_["fisher"]
    assert H.shape == (1, 3, 3)
    np.testing.assert_allclose(H[0], H[0].T)
    assert clf.released_statistics_["mle"] is None
    Z = np.hstack([X, np.ones((500, 1))]) / math.sqrt(3)
    # the weights in scaled units from the released coef_ and intercept_ (bounds (-1, 1))
    w = np.r_[clf.coef_[0], clf.intercept_] * math.sqrt(3)
    exact = fisher_information(Z, w)
    noise = H[0] - exact
    assert np.abs(noise).max() > 1e-6  # noised
    assert np.abs(noise).max() < 30 * clf.noise_scale_["fisher"]


def test_fisher_sensitivity_bound():
    # per row: sum over the upper triangle of |c z_j z_l| <= c (d' + 1) / 2, c = 1/4
    rng = np.random.default_rng(1)
    for d in (2, 3, 6, 11):
        Z = rng.normal(size=(2000, d))
        Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
        Z[0] = np.ones(d) / math.sqrt(d)  # the worst case
        upper = np.triu_indices(d)
        for z in Z[:200]:
            change = fisher_information(z[None, :], np.zeros(d))[upper]
            assert np.abs(change).sum() <= (d + 1) / 8 + 1e-12
        plan = LogisticPlan.build(
            epsilon=1.0,
            delta=0.0,
            eps_bounds=0.0,
            mechanism="objective",
            n_problems=1,
            C=1.0,
            inference=True,
        )
        assert plan.fisher_scale(d) == pytest.approx((d + 1) / 8 / plan.eps_fisher)


def test_epsilon_inf_matches_statsmodels_logit():
    sm = pytest.importorskip("statsmodels.api")
    X, y = _data(n=3000, d=3, coef=[1.0, -0.5, 0.0])
    clf = _fit(X, y, epsilon=math.inf, inference=True)
    res = sm.Logit(y, sm.add_constant(X, prepend=False)).fit(disp=0)
    ref = np.asarray(res.conf_int())
    width = (ref[:, 1] - ref[:, 0])[:, None]
    assert np.max(np.abs(clf.conf_int() - ref) / width) < 0.02
    table = clf.summary()
    np.testing.assert_allclose(table["std err"], res.bse, rtol=0.02)
    np.testing.assert_allclose(table["P>|z|"], res.pvalues, rtol=0.02, atol=1e-12)


def test_multiclass_one_vs_rest_blocks_and_feature_names():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(3000, 2)), columns=["age", "dose"])
    y = rng.choice(["a", "b", "c"], size=3000)
    clf = DPLogisticRegression(
        epsilon=3.0, classes=["a", "b", "c"], bounds_X=(-1, 1), inference=True, random_state=0
    ).fit(X, y)
    assert clf.released_statistics_["fisher"].shape == (3, 3, 3)
    assert clf.conf_int().shape == (3, 3, 2)
    table = clf.summary()
    assert list(table.index.get_level_values("class").unique()) == ["a", "b", "c"]
    assert list(table.loc["a"].index) == ["age", "dose", "intercept"]


def test_without_intercept():
    X, y = _data()
    clf = _fit(X, y, fit_intercept=False, inference=True)
    assert clf.conf_int().shape == (2, 2)


def test_mechanism_choice_and_refusals():
    X, y = _data(n=300)
    clf = _fit(X, y, inference=True, delta=1e-5)  # auto would pick DP-SGD at this n
    assert clf.mechanism_ == "objective"
    with pytest.raises(ValueError, match="inference=True needs mechanism"):
        _fit(X, y, inference=True, mechanism="dpsgd")
    clf = _fit(X, y, inference=True)
    with pytest.raises(ValueError, match="alpha"):
        clf.conf_int(alpha=1.5)
    with pytest.raises(ValueError, match="n_bootstrap"):
        clf.conf_int(n_bootstrap=10)
    with pytest.raises(TypeError, match="n_bootstrap"):
        clf.conf_int(n_bootstrap=500.0)


def test_inference_false_keeps_the_seeded_release():
    X, y = _data()
    a = _fit(X, y)
    b = _fit(X, y, inference=False)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_groups_fisher_noise_k_times():
    X, y = _data(n=1200)
    groups = np.repeat(np.arange(400), 3)
    row = _fit(X, y, inference=True)
    patient = _fit(X, y, inference=True, max_rows_per_group=3, groups=groups)
    assert patient.privacy_unit_ == "group"
    assert patient.noise_scale_["fisher"] == pytest.approx(3 * row.noise_scale_["fisher"])
    assert sum(patient.privacy_breakdown_.values()) == pytest.approx(1.0)
    assert patient.conf_int().shape == (3, 2)


@pytest.mark.slow
def test_coverage_smoke():
    truth = np.array([1.0, 0.0, 0.2])
    hits = []
    for seed in range(40):
        X, y = _data(n=2000, seed=seed)
        ci = _fit(X, y, inference=True, random_state=seed).conf_int(n_bootstrap=1000)
        hits.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    assert np.mean(hits) >= 0.85


def test_a_refit_without_inference_forgets_the_previous_fisher_release():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], bounds_X=(-1, 1), inference=True, random_state=0
    ).fit(X, y)
    clf.set_params(inference=False).fit(X, y)
    assert not hasattr(clf, "released_statistics_")
    with pytest.raises(ValueError, match="inference=True"):
        clf.conf_int()


def test_fisher_share_rises_where_the_public_information_is_low():
    from skdp.linear_model._logistic_plan import INFERENCE_SHARE_LOW, LOW_INFORMATION

    def plan(**kw):
        common = dict(epsilon=0.3, delta=0.0, eps_bounds=0.0, mechanism="objective")
        return LogisticPlan.build(**common, n_problems=1, C=1.0, inference=True, **kw)

    # n epsilon / d' = 500 * 0.3 / 6 = 25 < LOW_INFORMATION: the larger share
    assert 500 * 0.3 / 6 < LOW_INFORMATION
    assert plan(n_samples=500, n_coords=6).eps_fisher == pytest.approx(0.3 * INFERENCE_SHARE_LOW)
    assert plan(n_samples=2000, n_coords=6).eps_fisher == pytest.approx(0.3 * INFERENCE_SHARE)
    # without the shape (a patient-level fit: its row count is not public) the fixed share
    assert plan().eps_fisher == pytest.approx(0.3 * INFERENCE_SHARE)
    X, y = _data(n=500, d=5)
    clf = _fit(X, y, epsilon=0.3, inference=True)
    assert clf.privacy_breakdown_["fisher"] == pytest.approx(0.3 * INFERENCE_SHARE_LOW)
    assert sum(clf.privacy_breakdown_.values()) == pytest.approx(clf.epsilon_spent_)
    groups = np.arange(500) // 2
    patient = _fit(X, y, epsilon=0.3, inference=True, max_rows_per_group=2, groups=groups)
    assert patient.privacy_breakdown_["fisher"] == pytest.approx(0.3 * INFERENCE_SHARE)


def test_shrunk_fisher_removes_noise_only_off_diagonals_and_is_positive_definite():
    from skdp.linear_model._inference_logistic import _laplace_sym, shrunk_fisher

    rng = np.random.default_rng(0)
    H = np.diag([6.0, 6.0, 6.0, 18.0])
    noisy = H + _laplace_sym(rng, 8.0, 500, 4)
    S = shrunk_fisher(noisy, 8.0, 4.0)
    assert np.linalg.eigvalsh(S).min() >= 4.0 - 1e-9
    off = ~np.eye(4, dtype=bool)
    # pure-noise off-diagonals: shrunk towards 0 (the Frobenius error falls)
    assert np.abs(S[:, off]).mean() < 0.5 * np.abs(noisy[:, off]).mean()
    # no noise: only the floor
    np.testing.assert_allclose(shrunk_fisher(H, 0.0, 1.0), H)
    strong = np.array([[100.0, 80.0], [80.0, 100.0]])
    np.testing.assert_allclose(shrunk_fisher(strong, 1.0, 0.5), strong, rtol=1e-3)


def test_p_value_is_the_dual_of_the_interval():
    X, y = _data(n=2000, d=3, coef=[1.0, 0.3, 0.0])
    table = _fit(X, y, inference=True).summary(alpha=0.05)
    lower, upper = table["[0.025"].to_numpy(), table["0.975]"].to_numpy()
    excludes = (lower > 0) | (upper < 0)
    p = table["P>|z|"].to_numpy()
    assert np.all((p < 0.05) == excludes)
    assert np.all((p > 0) & (p <= 1))


def test_calibration_keeps_the_levels_when_the_bootstrap_is_exact():
    from skdp.linear_model._inference_logistic_boot import calibrated_table

    rng = np.random.default_rng(0)
    delta = rng.standard_normal((20000, 1))
    outer = rng.standard_normal((2000, 1))
    inner = rng.standard_normal((2000, 400, 1))  # the nested world looks like the first
    _, lo, hi, p = calibrated_table(np.zeros(1), delta, outer, inner, 0.05)
    assert lo[0] == pytest.approx(-1.96, abs=0.12) and hi[0] == pytest.approx(1.96, abs=0.12)
    assert p[0] > 0.9  # 0 is the centre


def test_calibration_narrows_what_the_nested_bootstrap_shows_too_wide():
    from skdp.linear_model._inference_logistic_boot import calibrated_table

    rng = np.random.default_rng(1)
    delta = rng.standard_normal((20000, 1))
    outer = rng.standard_normal((2000, 1))
    inner = 2.0 * rng.standard_normal((2000, 400, 1))  # nested deviations twice as wide
    _, lo, hi, _ = calibrated_table(np.zeros(1), delta, outer, inner, 0.05)
    # u = Phi(outer / 2): its 2.5 % quantile is Phi(-1.96 / 2), so the levels move inward
    assert hi[0] == pytest.approx(0.98, abs=0.12) and lo[0] == pytest.approx(-0.98, abs=0.12)
    # and widens what it shows too narrow
    _, lo, hi, _ = calibrated_table(np.zeros(1), delta, outer, 0.8 * inner / 2.0, 0.05)
    assert hi[0] > 2.2 and lo[0] < -2.2


def test_p_value_dual_of_the_calibrated_interval_at_every_alpha():
    from skdp.linear_model._inference_logistic_boot import calibrated_table

    rng = np.random.default_rng(2)
    centre = np.array([0.5, -2.5, 0.05])
    delta = rng.standard_normal((2000, 3))
    outer, inner = rng.standard_normal((200, 3)), 1.3 * rng.standard_normal((200, 100, 3))
    p = calibrated_table(centre, delta, outer, inner, 0.05)[3]
    assert np.all((p > 0) & (p <= 1))
    for alpha in (0.01, 0.05, 0.2, 0.5):
        _, lo, hi, _ = calibrated_table(centre, delta, outer, inner, alpha)
        excludes = (lo > 0) | (hi < 0)
        np.testing.assert_array_equal(p < alpha - 1e-6, excludes & (np.abs(p - alpha) > 1e-6))
