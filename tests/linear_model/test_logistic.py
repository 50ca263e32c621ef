"""DPLogisticRegression: objective perturbation, DP-SGD and the auto rule between them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression

from skdp.exceptions import PrivacyLeakWarning
from skdp.linear_model import DPLogisticRegression
from skdp.linear_model._logistic import (
    LOGISTIC_SMOOTHNESS,
    _scaled_rows,
    _solve,
    objective_perturbation_parameters,
    sample_noise,
)


def _binary(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = (X @ [2.0, -1.0, 0.5] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def test_large_epsilon_matches_sklearn_binary():
    X, y = _binary()
    C = 1e3
    dp = DPLogisticRegression(epsilon=math.inf, classes=[0, 1], bounds_X=(-1, 1), C=C).fit(X, y)
    # sklearn on the same scaled rows (x~ = (x, 1) / 2), same penalty on the intercept
    Z = np.hstack([X, np.ones((len(X), 1))]) / 2.0
    sk = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=10000).fit(Z, y)
    np.testing.assert_allclose(dp.coef_[0], sk.coef_[0, :3] / 2.0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dp.intercept_[0], sk.coef_[0, 3] / 2.0, rtol=1e-5, atol=1e-6)
    # finite, large epsilon: close to the non-private fit
    big = DPLogisticRegression(epsilon=1e3, classes=[0, 1], bounds_X=(-1, 1), C=C, random_state=0)
    big.fit(X, y)
    np.testing.assert_allclose(big.coef_, dp.coef_, atol=0.05)
    assert big.score(X, y) >= LogisticRegression().fit(X, y).score(X, y) - 0.01


def test_multinomial_one_vs_rest():
    rng = np.random.default_rng(1)
    centers = np.array([[-2.0, 0.0], [2.0, 0.0], [0.0, 3.0]])
    y = rng.integers(0, 3, size=3000)
    X = centers[y] + 0.6 * rng.standard_normal((3000, 2))
    labels = np.array(["a", "b", "c"])[y]
    clf = DPLogisticRegression(
        epsilon=5.0, classes=["a", "b", "c"], bounds_X=(-5, 5), random_state=0
    ).fit(X, labels)
    assert clf.coef_.shape == (3, 2) and clf.intercept_.shape == (3,)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.decision_function(X).shape == (3000, 3)
    assert clf.score(X, labels) > 0.9
    # epsilon split over the three problems
    lam, beta = objective_perturbation_parameters(5.0 / 3, 1.0)
    assert clf.ridge_ == pytest.approx(lam) and clf.noise_scale_["objective"] == pytest.approx(
        1 / beta
    )


def test_noise_norm_is_gamma():
    d, beta = 4, 0.7
    rng = np.random.default_rng(0)
    draws = np.array([sample_noise(d, beta, rng) for _ in range(4000)])
    norms = np.linalg.norm(draws, axis=1)
    p = stats.kstest(norms, stats.gamma(a=d, scale=1.0 / beta).cdf).pvalue
    assert p > 1e-3
    # uniform direction: mean of the unit vectors near 0, second moment I / d
    unit = draws / norms[:, None]
    assert np.abs(unit.mean(axis=0)).max() < 0.05
    np.testing.assert_allclose(unit.T @ unit / len(unit), np.eye(d) / d, atol=0.02)


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("C", [1e-2, 1.0, 1e4])
def test_parameters_give_epsilon(epsilon, C):
    lam, beta = objective_perturbation_parameters(epsilon, C)
    c = LOGISTIC_SMOOTHNESS
    assert lam >= 1.0 / C
    # privacy loss of one problem: beta (gradient shift <= 1) + log det ratio <= log(1+c/lam)
    assert beta + math.log1p(c / lam) == pytest.approx(epsilon)
    assert beta >= 0.9 * epsilon - 1e-12


def test_determinant_ratio_bound_brute_force():
    """det H_{D'} / det H_D in [1, 1 + c / lambda] for a random added row (add/remove)."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        d = int(rng.integers(1, 5))
        lam = float(rng.uniform(0.01, 2.0))
        Z = rng.standard_normal((5, d))
        Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
        w = rng.standard_normal(d) * 3
        curv = lambda t: 1.0 / (2.0 + np.exp(t) + np.exp(-t))  # noqa: E731
        H = (Z.T * curv(Z @ w)) @ Z + lam * np.eye(d)
        z = rng.standard_normal(d)
        z /= max(1.0, np.linalg.norm(z))
        H2 = H + curv(z @ w) * np.outer(z, z)
        ratio = np.linalg.det(H2) / np.linalg.det(H)
        assert 1.0 - 1e-12 <= ratio <= 1.0 + LOGISTIC_SMOOTHNESS / lam + 1e-12
        # gradient shift of the added row's loss: |l'| ||z|| <= 1
        assert abs(1.0 / (1.0 + np.exp(z @ w))) * np.linalg.norm(z) <= 1.0


def test_scaled_rows_in_unit_ball():
    rng = np.random.default_rng(0)
    X = rng.uniform(-10, 10, size=(500, 5))
    for fit_intercept in (True, False):
        Z, *_ = _scaled_rows(X, np.full(5, -3.0), np.full(5, 4.0), fit_intercept)
        assert np.linalg.norm(Z, axis=1).max() <= 1.0 + 1e-15


def test_privacy_facts_and_private_bounds():
    X, y = _binary(n=2000)
    clf = DPLogisticRegression(epsilon=2.0, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.epsilon_spent_ == 2.0 and clf.delta_spent_ == 0.0
    assert clf.privacy_guarantee_ == "exact"
    assert clf.privacy_breakdown_["bounds"] == pytest.approx(0.2)
    assert sum(clf.privacy_breakdown_.values()) == pytest.approx(2.0)
    lam, beta = objective_perturbation_parameters(1.8, 1.0)
    assert clf.noise_scale_["objective"] == pytest.approx(1 / beta)
    assert not hasattr(clf, "random_state_") and not hasattr(clf, "rng_")
    declared = DPLogisticRegression(epsilon=2.0, classes=[0, 1], bounds_X=(-1, 1))
    assert declared.fit(X, y).privacy_breakdown_["bounds"] == 0.0


def test_data_opt_ins_are_nonprivate():
    X, y = _binary(n=300)
    with pytest.warns(PrivacyLeakWarning):
        clf = DPLogisticRegression(classes="data", bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert clf.epsilon_spent_ == math.inf and clf.privacy_guarantee_ == "none"
    with pytest.warns(PrivacyLeakWarning):
        clf = DPLogisticRegression(classes=[0, 1], bounds_X="data", random_state=0).fit(X, y)
    assert clf.epsilon_spent_ == math.inf


def test_classes_rules():
    X, y = _binary(n=200)
    with pytest.raises(ValueError, match="public label set"):
        DPLogisticRegression(bounds_X=(-1, 1)).fit(X, y)
    with pytest.raises(ValueError, match="not in classes"):
        DPLogisticRegression(classes=[0, 2], bounds_X=(-1, 1)).fit(X, y)
    with pytest.raises(ValueError, match="distinct"):
        DPLogisticRegression(classes=[0, 0], bounds_X=(-1, 1)).fit(X, y)
    with pytest.raises(ValueError, match="at least two"):
        DPLogisticRegression(classes=[1], bounds_X=(-1, 1)).fit(X, y)
    # a declared class absent from y is fine; declared order is kept
    clf = DPLogisticRegression(classes=[1, 0], bounds_X=(-1, 1), random_state=0).fit(
        X[y == 1], y[y == 1]
    )
    assert list(clf.classes_) == [1, 0] and clf.predict_proba(X).shape == (200, 2)
    clf = DPLogisticRegression(classes=[0, 1, 2], bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, 3)


def test_reproducible_and_independent():
    X, y = _binary(n=500)
    kw = dict(epsilon=1.0, classes=[0, 1], bounds_X=(-1, 1))
    a = DPLogisticRegression(random_state=7, **kw).fit(X, y)
    b = DPLogisticRegression(random_state=7, **kw).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    perm = np.random.default_rng(0).permutation(500)
    c = DPLogisticRegression(random_state=7, **kw).fit(X[perm], y[perm])
    np.testing.assert_allclose(a.coef_, c.coef_, atol=1e-8)  # order-invariant streams
    d = DPLogisticRegression(random_state=8, **kw).fit(X, y)
    assert not np.allclose(a.coef_, d.coef_)
    e = DPLogisticRegression(random_state=7, **kw).fit(X[1:], y[1:])
    assert not np.allclose(a.coef_ - e.coef_, 0.0, atol=1e-3)


def test_clip_false_and_sample_weight():
    X, y = _binary(n=100)
    with pytest.raises(ValueError, match="outside the declared bounds"):
        DPLogisticRegression(classes=[0, 1], bounds_X=(-0.5, 0.5), clip=False).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        DPLogisticRegression(classes=[0, 1], bounds_X=(-1, 1)).fit(X, y, sample_weight=np.ones(100))


def test_minimiser_is_precise():
    X, y = _binary(n=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = DPLogisticRegression(
            epsilon=0.5, classes=[0, 1], bounds_X=(-1, 1), random_state=0
        ).fit(X, y)
    # white-box: the solver on the fit's scaled rows and a noise draw of its law (the
    # residual is not a fitted attribute: it is an un-noised function of the rows)
    Z, *_ = _scaled_rows(X, np.full(3, -1.0), np.full(3, 1.0), True)
    ridge, beta = objective_perturbation_parameters(0.5, 1.0)
    b = sample_noise(Z.shape[1], beta, np.random.default_rng(0))
    _, _, gradient_norm = _solve(Z, np.where(y == 1, 1.0, -1.0), ridge, b, tol=1e-10, max_iter=1000)
    assert gradient_norm / clf.ridge_ < 1e-8


def test_fit_stores_no_solver_statistics():
    """Attack: the L-BFGS iteration count and residual of a fit are un-noised functions of
    the private rows (the proof covers only the exact minimiser); none may be stored."""
    X, y = _binary(n=500)
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], bounds_X=(-1, 1), random_state=0)
    clf.fit(X, y)
    # n_iter_ counts DP-SGD steps (a public constant); objective perturbation reports 0
    assert clf.n_iter_ == 0 and not hasattr(clf, "gradient_norm_")
    assert clf.loss_curve_.shape == (0,)


# ------------------------------------------------------------------ mechanism="dpsgd"
def _sgd(**kw):
    params = dict(
        epsilon=1.0,
        delta=1e-5,
        mechanism="dpsgd",
        classes=[0, 1],
        bounds_X=(-1, 1),
        n_iter=60,
        random_state=0,
    )
    return DPLogisticRegression(**(params | kw))


@pytest.mark.slow
def test_dpsgd_spends_epsilon_delta_with_the_calibrated_noise():
    from skdp.accounting import calibrate_noise_multiplier

    X, y = _binary(n=1000)
    clf = _sgd().fit(X, y)
    assert (clf.epsilon_spent_, clf.delta_spent_) == (1.0, 1e-5)
    assert clf.privacy_breakdown_ == {"bounds": 0.0, "dpsgd": 1.0}
    assert clf.privacy_guarantee_ == "exact"
    assert clf.n_iter_ == 60 and clf.loss_curve_.shape == (0,)
    sigma = calibrate_noise_multiplier(
        epsilon=1.0, delta=1e-5, sample_rate=64 / 1000, steps=60, accountant="pld"
    )
    assert clf.noise_multiplier_ == pytest.approx(sigma)
    assert clf.score(X, y) > 0.85
    # one-vs-rest: each of the K problems at (epsilon / K, delta / K)
    y3 = y + (X[:, 2] > 0.5)
    multi = _sgd(classes=[0, 1, 2]).fit(X, y3)
    sigma3 = calibrate_noise_multiplier(
        epsilon=1.0 / 3, delta=1e-5 / 3, sample_rate=64 / 1000, steps=60, accountant="pld"
    )
    assert multi.noise_multiplier_ == pytest.approx(sigma3)
    assert multi.coef_.shape == (3, 3) and multi.epsilon_spent_ == 1.0


def test_dpsgd_needs_delta_reproducible_and_independent_across_data_sets():
    X, y = _binary(n=600)
    with pytest.raises(ValueError, match="delta"):
        _sgd(delta=0.0).fit(X, y)
    a = _sgd().fit(X, y).coef_
    assert np.array_equal(a, _sgd().fit(X, y).coef_)
    X2 = X.copy()
    X2[0, 0] = -X2[0, 0]  # a neighbouring data set: other noise under the same seed
    assert not np.array_equal(a, _sgd().fit(X2, y).coef_)


def test_dpsgd_non_private_keeps_its_loss_curve():
    X, y = _binary(n=600)
    clf = _sgd(epsilon=math.inf).fit(X, y)
    assert math.isinf(clf.epsilon_spent_)
    assert clf.loss_curve_.size > 0 and np.all(np.isfinite(clf.loss_curve_))


# ------------------------------------------------------------------ mechanism="auto"
def test_auto_rule_reads_public_quantities_only():
    from skdp.linear_model._logistic import AUTO_DPSGD_BELOW, auto_mechanism

    assert AUTO_DPSGD_BELOW == 100.0
    # r = n epsilon / (K' (p + 1)) below 100 and 0 < delta < 1 / n: DP-SGD
    assert auto_mechanism(499, 4, 1.0, 1e-5) == "dpsgd"
    assert auto_mechanism(500, 4, 1.0, 1e-5) == "objective"
    assert auto_mechanism(250, 4, 2.0, 1e-5) == "objective"
    # one-vs-rest divides epsilon over the K problems
    assert auto_mechanism(1000, 4, 1.0, 1e-5, n_problems=1) == "objective"
    assert auto_mechanism(1000, 4, 1.0, 1e-5, n_problems=3) == "dpsgd"
    # no delta allowed (pure epsilon-DP), delta >= 1 / n, or no privacy: objective
    assert auto_mechanism(300, 8, 1.0, 0.0) == "objective"
    assert auto_mechanism(50, 30, 1.0, 0.02) == "objective"
    assert auto_mechanism(300, 8, math.inf, 1e-5) == "objective"
    # monotone: more rows or more epsilon never switch back to DP-SGD
    for p in (1, 8, 30):
        picks = [auto_mechanism(n, p, e, 1e-6) for e in (0.1, 1.0, 3.0) for n in (50, 500, 50_000)]
        for i, m in enumerate(picks):
            if m == "objective" and i % 3 < 2:
                assert picks[i + 1] == "objective"


def test_default_auto_picks_dpsgd_on_a_small_table_objective_on_a_large_one():
    X, y = _binary(n=300)
    small = DPLogisticRegression(classes=[0, 1], bounds_X=(-1, 1), n_iter=40, random_state=0)
    small.fit(X, y)
    assert small.mechanism == "auto" and small.delta == 1e-5
    assert small.mechanism_ == "dpsgd"  # r = 300 / 4 = 75
    assert (small.epsilon_spent_, small.delta_spent_) == (1.0, 1e-5)
    assert small.privacy_breakdown_ == {"bounds": 0.0, "dpsgd": 1.0}
    assert small.n_iter_ == 40 and small.ridge_ == 0.0
    X, y = _binary(n=4000)
    large = DPLogisticRegression(classes=[0, 1], bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert large.mechanism_ == "objective" and large.delta_spent_ == 0.0  # r = 1000
    assert large.privacy_breakdown_ == {"bounds": 0.0, "objective": 1.0}
    # delta=0: pure epsilon-DP whatever n
    pure = DPLogisticRegression(classes=[0, 1], bounds_X=(-1, 1), delta=0.0, random_state=0)
    pure.fit(X[:300], y[:300])
    assert pure.mechanism_ == "objective" and pure.delta_spent_ == 0.0
    # an explicit mechanism is kept
    explicit = DPLogisticRegression(
        classes=[0, 1], bounds_X=(-1, 1), mechanism="objective", random_state=0
    ).fit(X[:300], y[:300])
    assert explicit.mechanism_ == "objective" and explicit.delta_spent_ == 0.0


def test_auto_choice_is_the_same_on_neighbouring_and_arbitrary_data_sets():
    from skdp.linear_model._logistic import auto_mechanism

    for n in (200, 700):
        X, y = _binary(n=n, seed=n)
        variants = [(X, y)]
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = 1.0, 1 - y2[0]  # one row replaced
        variants.append((X2, y2))
        variants.append((np.zeros_like(X), np.zeros_like(y)))  # constant rows, one class
        picks = {
            DPLogisticRegression(classes=[0, 1], bounds_X=(-1, 1), n_iter=5, random_state=0)
            .fit(A, b)
            .mechanism_
            for A, b in variants
        }
        assert picks == {auto_mechanism(n, 3, 1.0, 1e-5)}


def test_planned_guarantee_is_decidable_from_parameters():
    from skdp.utils._meta_privacy import check_pipeline_privacy

    def planned(**kw):
        return DPLogisticRegression(classes=[0, 1], **kw)._planned_privacy_guarantee()

    assert planned() == "exact"
    # "auto" may pick DP-SGD (delta > 0): the approximate accountant's guarantee is planned
    assert planned(accountant="gdp_clt") == "approximate"
    assert planned(accountant="gdp_clt", delta=0.0) == "exact"
    assert planned(accountant="gdp_clt", mechanism="objective") == "exact"
    assert planned(accountant="gdp_clt", mechanism="dpsgd") == "approximate"
    step = check_pipeline_privacy(DPLogisticRegression(classes=[0, 1], bounds_X=(-1, 1)))
    assert (step.epsilon, step.delta, step.privacy_guarantee) == (1.0, 1e-5, "exact")
    # the fitted guarantee is never weaker than the planned one
    X, y = _binary(n=4000)
    clf = DPLogisticRegression(
        classes=[0, 1], bounds_X=(-1, 1), accountant="gdp_clt", random_state=0
    ).fit(X, y)
    assert clf.mechanism_ == "objective" and clf.privacy_guarantee_ == "exact"


# ------------------------------------------------------------------------- verbose
def _records(caplog):
    return [r.skdp_progress for r in caplog.records if hasattr(r, "skdp_progress")]


def test_verbose_logs_public_progress_for_both_mechanisms(caplog, capsys):
    caplog.set_level("INFO", logger="skdp")
    X, y = _binary(n=2000)
    y3 = y + (X[:, 2] > 0.5)
    DPLogisticRegression(
        epsilon=2.0, classes=[0, 1, 2], bounds_X=(-1, 1), mechanism="objective", verbose=1
    ).fit(X, y3)
    recs = _records(caplog)
    assert [(r["phase"], r["step"], r["total"]) for r in recs] == [
        ("objective", k, 3) for k in (1, 2, 3)
    ]
    assert [r["epsilon_spent"] for r in recs] == pytest.approx([2 / 3, 4 / 3, 2.0])
    assert all(r["loss"] is None for r in recs)
    out = capsys.readouterr()
    assert out.out == "" and "eps so far" in out.err  # verbose=1: standard error only
    caplog.clear()
    _sgd(n_iter=20, verbose=0).fit(X, y)
    recs = _records(caplog)
    assert recs and all(r["phase"] == "dpsgd" and r["loss"] is None for r in recs)
    assert recs[-1]["step"] == recs[-1]["total"] == 20
    # the accountant's epsilon at the calibrated noise: at most the budget
    assert 0.95 <= recs[-1]["epsilon_spent"] <= 1.0
    assert capsys.readouterr().err == ""  # verbose=0: logged, not shown
    caplog.clear()
    _sgd(n_iter=20, epsilon=math.inf).fit(X, y)
    assert all(r["loss"] is not None for r in _records(caplog))  # non-private fit only


def test_deprecated_noise_rate_is_the_inverse_of_the_noise_scale():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(
        epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], mechanism="objective", random_state=0
    ).fit(X, y)
    with pytest.warns(FutureWarning, match="noise_rate_ is deprecated"):
        assert clf.noise_rate_ == pytest.approx(1 / clf.noise_scale_["objective"])
    assert "noise_rate_" not in vars(clf)


@pytest.mark.parametrize(
    "kw",
    [
        {"mechanism": "objective"},
        {"mechanism": "objective", "bounds_X": "private", "epsilon": 4.0},
        {"mechanism": "dpsgd", "n_iter": 3},
        {"mechanism": "objective", "classes": [0, 1, 2]},
        {"mechanism": "objective", "epsilon": math.inf},
    ],
)
def test_privacy_facts_come_from_the_plan_alone(kw):
    """LogisticPlan, built from public inputs (the budget, the bounds' public share, the
    resolved mechanism, the declared classes, C), is the only source of
    privacy_breakdown_, epsilon_spent_, delta_spent_ and noise_scale_."""
    import warnings

    from skdp.linear_model._logistic_plan import LogisticPlan

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 2))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int) * ("classes" in kw)
    params = {"epsilon": 1.0, "bounds_X": (-1, 1), "classes": [0, 1], "random_state": 0}
    params.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DPLogisticRegression(**params).fit(X, y)
    plan = LogisticPlan.build(
        epsilon=params["epsilon"],
        delta=clf.delta,
        eps_bounds=clf.privacy_breakdown_["bounds"],  # a public fraction of epsilon
        mechanism=clf.mechanism_,
        n_problems=1 if len(params["classes"]) == 2 else len(params["classes"]),
        C=clf.C,
    )
    assert plan.breakdown() == clf.privacy_breakdown_
    assert plan.noise_scale() == clf.noise_scale_
    assert (plan.epsilon, plan.delta_spent) == (clf.epsilon_spent_, clf.delta_spent_)
    if math.isfinite(params["epsilon"]):
        assert sum(plan.breakdown().values()) == pytest.approx(params["epsilon"], rel=1e-12)
        assert clf.ridge_ == (0.0 if plan.dpsgd else plan.ridge)
    if params.get("bounds_X") == "private":
        assert clf.privacy_breakdown_["bounds"] == pytest.approx(0.1 * params["epsilon"])


def test_patient_level_fit_runs_each_problem_at_epsilon_over_k():
    """groups= with max_rows_per_group=k: objective perturbation at epsilon / k per
    row (epsilon per patient), the unit recorded; 'auto' picks objective perturbation;
    estimated bounds and a missing bound are refused (DP-SGD per patient:
    tests/linear_model/test_logistic_dpsgd_groups.py)."""
    from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
    from skdp.linear_model._logistic_plan import LogisticPlan

    X, _, event, groups = make_longitudinal_ehr(300, random_state=0)
    kw = dict(bounds_X=LONGITUDINAL_EHR_BOUNDS(), classes=[0, 1], random_state=0)
    clf = DPLogisticRegression(max_rows_per_group=4, **kw).fit(X, event, groups=groups)
    assert clf.mechanism_ == "objective" and clf.privacy_unit_ == "group"
    assert clf.max_rows_per_group_ == 4 and clf.epsilon_spent_ == 1.0
    row = LogisticPlan.build(
        epsilon=1.0, delta=1e-5, eps_bounds=0.0, mechanism="objective", n_problems=1, C=1.0
    )
    per_row_quarter = LogisticPlan.build(
        epsilon=0.25, delta=1e-5, eps_bounds=0.0, mechanism="objective", n_problems=1, C=1.0
    )
    assert clf.ridge_ == per_row_quarter.ridge != row.ridge
    assert clf.noise_scale_["objective"] == pytest.approx(1 / per_row_quarter.rate)
    plain = DPLogisticRegression(mechanism="objective", **kw).fit(X, event)
    assert plain.privacy_unit_ == "row" and plain.max_rows_per_group_ is None
    with pytest.raises(ValueError, match="needs max_rows_per_group"):
        DPLogisticRegression(**kw).fit(X, event, groups=groups)
    bad = {**kw, "bounds_X": None}
    with pytest.raises(ValueError, match="bounds_X=None with groups"):
        DPLogisticRegression(max_rows_per_group=2, **bad).fit(X, event, groups=groups)


def test_patient_level_progress_reports_the_per_patient_spend(caplog):
    """The progress records' epsilon_spent is the public schedule per patient: the last
    one is epsilon, not epsilon / k."""
    import logging

    from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr

    X, _, event, groups = make_longitudinal_ehr(200, random_state=0)
    clf = DPLogisticRegression(
        epsilon=1.0,
        bounds_X=LONGITUDINAL_EHR_BOUNDS(),
        classes=[0, 1],
        max_rows_per_group=4,
        random_state=0,
    )
    with caplog.at_level(logging.INFO, logger="skdp"):
        clf.fit(X, event, groups=groups)
    spent = [
        r.skdp_progress["epsilon_spent"] for r in caplog.records if hasattr(r, "skdp_progress")
    ]
    assert spent and spent[-1] == pytest.approx(clf.epsilon_spent_)
