"""ExpMFlowClassifier / ExpMFlowRegressor (spec E §5, §6 T6, T10, T21; spec README §2 row 7)."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

from skdp.exceptions import (
    ApproximateGuaranteeWarning,
    PrivacyLeakWarning,
)
from skdp.linear_model import ExpMFlowClassifier, ExpMFlowRegressor

FAST = dict(n_iter=60, n_layers=1, batch_size=64, dtype="float64", device="cpu")


def _quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateGuaranteeWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def _binary(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ np.arange(1, d + 1) + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_classifier_basic_contract():
    X, y = _binary()
    with pytest.warns(ApproximateGuaranteeWarning):
        clf = ExpMFlowClassifier(classes=[0, 1], epsilon=5.0, random_state=0, **FAST).fit(X, y)
    assert clf.privacy_guarantee_ == "approximate"
    assert clf.epsilon_spent_ == 5.0 and clf.delta_spent_ == 0.0
    assert clf.sensitivity_ == 1.0
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(1), 1.0)
    assert set(np.unique(clf.predict(X))) <= {0, 1}
    assert roc_auc_score(y, P[:, 1]) > 0.9
    assert clf.flow_diagnostics_ is None  # an opt-in: un-noised functions of the data


def _diagnosed(est, X, y):
    with pytest.warns(PrivacyLeakWarning, match="diagnostics=True"):
        return _quiet(est.set_params(diagnostics=True), X, y)


def test_diagnostics_are_a_non_private_opt_in():
    X, y = _binary()
    clf = _diagnosed(ExpMFlowClassifier(classes=[0, 1], epsilon=5.0, random_state=0, **FAST), X, y)
    dg = clf.flow_diagnostics_
    assert {"ess_fraction", "kl_estimate", "kl_upper_bound", "collapsed"} <= set(dg)
    assert dg["kl_upper_bound"] >= dg["kl_estimate"] - 0.1
    # exponent epsilon / (2 s) (valid under add/remove and replace-one), so R = epsilon n / 2
    assert dg["utility_range"] == pytest.approx(5.0 * len(y) / 2)
    assert clf.epsilon_spent_ == math.inf and clf.privacy_guarantee_ == "none"
    assert clf.nonprivate_options_ == ["diagnostics"]


def test_random_state_reproducible_and_distinct():
    X, y = _binary()
    a = _quiet(ExpMFlowClassifier(classes=[0, 1], epsilon=1.0, random_state=3, **FAST), X, y)
    b = _quiet(ExpMFlowClassifier(classes=[0, 1], epsilon=1.0, random_state=3, **FAST), X, y)
    c = _quiet(ExpMFlowClassifier(classes=[0, 1], epsilon=1.0, random_state=4, **FAST), X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
    assert not np.allclose(a.coef_, c.coef_)


def test_release_is_random_not_the_mode():
    """At small epsilon the released models spread like the mechanism (not a point mass)."""
    X, y = _binary(n=100)
    coefs = np.array(
        [
            _quiet(
                ExpMFlowClassifier(classes=[0, 1], epsilon=0.5, random_state=s, **FAST), X, y
            ).coef_
            for s in range(6)
        ]
    )
    assert coefs.std(0).min() > 0.05


def test_epsilon_is_total_over_released_samples():
    """README §2 row 7 (replaces T21's k * epsilon): k samples at epsilon / k each."""
    X, y = _binary()
    clf = _quiet(
        ExpMFlowClassifier(
            classes=[0, 1], epsilon=3.0, n_release_samples=3, random_state=0, **FAST
        ),
        X,
        y,
    )
    assert clf.epsilon_spent_ == 3.0
    assert clf.epsilon_per_sample_ == pytest.approx(1.0)
    coefs, ints = clf.sample_models()
    assert coefs.shape == (3, X.shape[1]) and ints.shape == (3,)
    np.testing.assert_array_equal(coefs[0], clf.coef_)
    with pytest.raises(ValueError, match="keep_flow"):
        clf.sample_models(5)


def test_keep_flow_false_leaves_no_flow_in_pickle():
    X, y = _binary()
    clf = _quiet(ExpMFlowClassifier(classes=[0, 1], epsilon=1.0, random_state=0, **FAST), X, y)
    assert "flow_" not in clf.__dict__
    assert b"Sylvester" not in pickle.dumps(clf)
    with pytest.warns(PrivacyLeakWarning, match="keep_flow=True"):
        kept = _quiet(
            ExpMFlowClassifier(classes=[0, 1], epsilon=1.0, keep_flow=True, random_state=0, **FAST),
            X,
            y,
        )
    assert "flow_" in kept.__dict__
    assert kept.epsilon_spent_ == math.inf and kept.privacy_guarantee_ == "none"
    with pytest.warns(PrivacyLeakWarning, match="another epsilon"):
        coefs, ints = kept.sample_models(4)
    assert coefs.shape == (4, X.shape[1])
    np.testing.assert_array_equal(coefs[0], kept.coef_)


def test_infinite_epsilon_releases_the_mode():
    X, y = _binary()
    a = ExpMFlowClassifier(classes=[0, 1], epsilon=math.inf, random_state=0, **FAST).fit(X, y)
    b = ExpMFlowClassifier(classes=[0, 1], epsilon=math.inf, random_state=1, **FAST).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_)
    assert a.epsilon_spent_ == math.inf and a.privacy_guarantee_ == "none"
    assert a.flow_diagnostics_ is None


@pytest.mark.parametrize(
    "params, match",
    [
        ({"alpha": 0.0}, "alpha"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"penalty": "l3"}, "penalty"),
        ({"n_release_samples": 0}, "n_release_samples"),
    ],
)
def test_bad_parameters_raise(params, match):
    X, y = _binary(50)
    with pytest.raises(ValueError, match=match):
        ExpMFlowClassifier(classes=[0, 1], **params, **FAST).fit(X, y)


def test_bad_inputs_raise():
    X, y = _binary(50)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError):
        ExpMFlowClassifier(classes=[0, 1], **FAST).fit(Xn, y)
    # the label set is public metadata: it must be declared (issue 15 item 4)
    with pytest.raises(ValueError, match="classes=\\[negative, positive\\]"):
        ExpMFlowClassifier(**FAST).fit(X, y)
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ValueError, match="two") as err:
        ExpMFlowClassifier(classes="data", **FAST).fit(X, np.arange(50) % 3)
    assert "3" not in str(err.value)  # no class count in the message
    with pytest.raises(ValueError, match="not in classes"):
        ExpMFlowClassifier(classes=[0, 2], **FAST).fit(X, y)
    clf = _quiet(
        ExpMFlowClassifier(classes=["no", "yes"], random_state=0, **FAST),
        X,
        np.where(y == 1, "yes", "no"),
    )
    assert list(clf.classes_) == ["no", "yes"]
    one = _quiet(ExpMFlowClassifier(classes=[0, 1], random_state=0, **FAST), X, np.zeros(50, int))
    assert one.predict_proba(X).shape == (50, 2)


def test_two_parameter_lr_matches_grid_quadrature():
    """Case E (spec E §1.7): 1 feature + intercept, exact posterior on a grid."""
    rng = np.random.default_rng(1)
    n, eps, alpha = 40, 1.0, 1.0
    x = rng.normal(size=n)
    y = (x + 0.8 * rng.normal(size=n) > 0).astype(float)
    w = np.linspace(-6, 8, 281)
    b = np.linspace(-6, 6, 241)
    W, B = np.meshgrid(w, b, indexing="ij")
    yhat = 1 / (1 + np.exp(-(W[..., None] * x + B[..., None])))
    u = -(((yhat - y) ** 2).sum(-1) + alpha * (W**2 + B**2))
    lp = eps / 2 * u  # the estimators' exponent epsilon / (2 s)
    p = np.exp(lp - lp.max())
    p /= p.sum()
    mean_w, mean_b = (p * W).sum(), (p * B).sum()
    var_w = (p * (W - mean_w) ** 2).sum()
    with pytest.warns(PrivacyLeakWarning, match="keep_flow=True"):
        clf = _quiet(
            ExpMFlowClassifier(
                classes=[0, 1],
                epsilon=eps,
                alpha=alpha,
                keep_flow=True,
                n_iter=300,
                n_layers=2,
                dtype="float64",
                device="cpu",
                random_state=0,
            ),
            x[:, None],
            y.astype(int),
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        coefs, ints = clf.sample_models(4000)
    assert coefs[:, 0].mean() == pytest.approx(mean_w, abs=0.1 * math.sqrt(var_w))
    assert ints.mean() == pytest.approx(mean_b, abs=0.15)
    assert 0.8 <= coefs[:, 0].var() / var_w <= 1.25  # T10 variance ratio


def test_regressor_bounds_and_prediction_range():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = 10 + 3 * X[:, 0] + rng.normal(size=150)
    reg = _quiet(ExpMFlowRegressor(epsilon=5.0, bounds_y=(0, 20), random_state=0, **FAST), X, y)
    pred = reg.predict(X)
    assert pred.min() >= 0 and pred.max() <= 20
    assert reg.score(X, y) > 0.5
    assert reg.bounds_y_ == (0.0, 20.0) and reg.epsilon_spent_ == 5.0
    # private bounds are charged inside epsilon (150 rows: None refuses the unreliable
    # estimate, "private" opts in to it)
    with pytest.raises(ValueError, match='bounds_y="private"'):
        ExpMFlowRegressor(epsilon=5.0, random_state=0, **FAST).fit(X, y)
    regp = _quiet(ExpMFlowRegressor(epsilon=5.0, bounds_y="private", random_state=0, **FAST), X, y)
    assert regp.epsilon_spent_ == 5.0
    assert regp.epsilon_per_sample_ == pytest.approx(4.5)
    with pytest.warns(PrivacyLeakWarning):
        _quiet(ExpMFlowRegressor(epsilon=5.0, bounds_y="data", random_state=0, **FAST), X, y)
    with pytest.raises(ValueError, match="bounds_y"):
        ExpMFlowRegressor(bounds_y=(1, 1), **FAST).fit(X, y)


def test_collapse_warning_when_flow_is_untrained_far_from_target():
    """A prior-initialised flow with no training on a peaked target is flagged."""
    X, y = _binary(n=300, d=5)
    with pytest.warns(ConvergenceWarning, match="collapsed or measurably far"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ApproximateGuaranteeWarning)
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            clf = ExpMFlowClassifier(
                classes=[0, 1],
                epsilon=10.0,
                init="prior",
                diagnostics=True,
                n_iter=0,
                random_state=0,
                dtype="float64",
                device="cpu",
            ).fit(X, y)
    assert clf.flow_diagnostics_["collapsed"]


TEST_PARAMS = dict(
    epsilon=1e3,
    n_iter=5,
    n_layers=1,
    batch_size=16,
    dtype="float64",
    device="cpu",
    random_state=0,
    n_diagnostic_samples=64,
)


@pytest.mark.parametrize(
    "kw",
    [
        {"penalty": "l1"},
        {"data_batch_size": 40},
        {"fit_intercept": False},
        {"n_layers": 0, "dtype": "float32"},
    ],
)
def test_options_fit_and_predict(kw):
    X, y = _binary(n=150)
    params = {**FAST, "n_iter": 30, **kw}
    clf = _diagnosed(
        ExpMFlowClassifier(classes=[0, 1], epsilon=3.0, random_state=0, **params), X, y
    )
    assert roc_auc_score(y, clf.predict_proba(X)[:, 1]) > 0.85
    # not collapsed: well above the collapse threshold MIN_ESS_FRACTION = 0.01 (the l1
    # penalty's kink keeps the importance weights uneven: 0.09 at one seed)
    assert clf.flow_diagnostics_["ess_fraction"] > 0.05
    if not params.get("fit_intercept", True):
        assert clf.intercept_ == 0.0


# ------------------------------------------------------------- torch threads (n_jobs)
@pytest.mark.parametrize("cls", [ExpMFlowClassifier, ExpMFlowRegressor])
def test_n_jobs_sets_the_threads_of_training_and_restores_them(cls, monkeypatch, three_threads):
    import torch

    import skdp.variational._expm as expm

    seen = []
    real = expm.fit_reverse_kl

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(expm, "fit_reverse_kl", spy)
    X, y = _binary()
    kw = {**FAST, "n_iter": 2, "epsilon": 5.0, "random_state": 0}
    if cls is ExpMFlowClassifier:
        kw["classes"] = [0, 1]
    else:
        kw["bounds_y"] = (0.0, 1.0)
    for n_jobs, during in ((1, 1), (2, 2), (None, 1)):  # None: 64 x 200 x 4 is small
        _quiet(cls(n_jobs=n_jobs, **kw), X, y)
        assert seen[-1] == during
        assert torch.get_num_threads() == three_threads

    def boom(*args, **kwargs):
        assert torch.get_num_threads() == 1
        raise RuntimeError("training failed")

    monkeypatch.setattr(expm, "fit_reverse_kl", boom)
    with pytest.raises(RuntimeError, match="training failed"):
        _quiet(cls(n_jobs=1, **kw), X, y)
    assert torch.get_num_threads() == three_threads


@pytest.mark.parametrize("d, fit_intercept", [(2, True), (3, False)])
def test_default_n_iter_is_a_public_function_of_the_parameter_count(d, fit_intercept):
    """The default step count reads only n_features (and fit_intercept), never the rows."""
    X, y = _binary(n=40, d=d)
    kw = {k: v for k, v in FAST.items() if k != "n_iter"}
    clf = _quiet(
        ExpMFlowClassifier(classes=[0, 1], fit_intercept=fit_intercept, random_state=0, **kw),
        X,
        y,
    )
    assert clf.get_params()["n_iter"] is None
    assert clf.n_iter_ == 100 + 10 * (d + int(fit_intercept))
    # other rows of the same shape: the same count
    other = _quiet(
        ExpMFlowClassifier(classes=[0, 1], fit_intercept=fit_intercept, random_state=0, **kw),
        -X[::-1],
        1 - y,
    )
    assert other.n_iter_ == clf.n_iter_
    with pytest.raises(ValueError, match="n_iter"):
        ExpMFlowClassifier(classes=[0, 1], n_iter="fast").fit(X, y)


def test_deprecated_names_n_flows_and_bounds_still_work_for_one_release():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = np.clip(0.5 + 0.2 * X[:, 0], 0.0, 1.0)
    kw = dict(FAST, epsilon=1.0, bounds_y=(0.0, 1.0), random_state=0)
    kw.pop("n_layers", None)
    new = ExpMFlowRegressor(n_layers=1, **kw).fit(X, y)
    with pytest.warns(FutureWarning, match=r"n_flows=\.\.\.\) is deprecated"):
        old = ExpMFlowRegressor(n_flows=1, **kw).fit(X, y)
    np.testing.assert_array_equal(old.coef_, new.coef_)  # the same model
    with pytest.raises(ValueError, match="set n_layers= only"):
        ExpMFlowRegressor(n_flows=1, n_layers=2, **kw).fit(X, y)
    with pytest.warns(FutureWarning, match=r"bounds_ is deprecated.*bounds_y_"):
        assert new.bounds_ == new.bounds_y_ == (0.0, 1.0)


@pytest.mark.parametrize(
    "kind, kw",
    [
        ("classifier", {"epsilon": 5.0}),
        ("classifier", {"epsilon": 3.0, "n_release_samples": 3}),
        ("classifier", {"epsilon": math.inf}),
        ("regressor", {"epsilon": 5.0, "bounds_y": (0, 20)}),
        ("regressor", {"epsilon": 5.0, "bounds_y": "private", "n_release_samples": 2}),
        ("regressor", {"epsilon": math.inf, "bounds_y": (0, 20)}),
        ("regressor", {"epsilon": math.inf, "bounds_y": "private"}),
    ],
)
def test_privacy_facts_come_from_the_plan_alone(kind, kw):
    """The plan is built from public inputs only (the budget, n_release_samples and, for
    the regressor, whether bounds_y is estimated) and is the only source of
    privacy_breakdown_, epsilon_spent_, delta_spent_, epsilon_per_sample_ and
    sensitivity_: a plan built without the rows gives the fitted facts, and its
    breakdown sums to epsilon."""
    from skdp.linear_model._expm_flow_plan import ExpMFlowPlan

    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    if kind == "classifier":
        y = (X[:, 0] > 0).astype(int)
        est = _quiet(ExpMFlowClassifier(classes=[0, 1], random_state=0, **FAST, **kw), X, y)
    else:
        y = 10 + 3 * X[:, 0] + rng.normal(size=150)
        est = _quiet(ExpMFlowRegressor(random_state=0, **FAST, **kw), X, y)
    plan = ExpMFlowPlan.build(
        epsilon=kw["epsilon"],
        n_release_samples=kw.get("n_release_samples", 1),
        regressor=kind == "regressor",
        bounds_estimated=kw.get("bounds_y") == "private",
    )
    assert plan.breakdown() == est.privacy_breakdown_
    assert (plan.epsilon_spent, plan.delta_spent) == (est.epsilon_spent_, est.delta_spent_)
    assert plan.epsilon_per_sample == est.epsilon_per_sample_
    assert plan.sensitivity == est.sensitivity_ == 1.0
    assert est.sampled_coefs_.shape[0] == plan.n_release_samples
    assert sum(plan.breakdown().values()) == pytest.approx(kw["epsilon"], rel=1e-12)
    if math.isfinite(kw["epsilon"]):
        assert est.privacy_guarantee_ == plan.guarantee == "approximate"
        private_bounds = kw.get("bounds_y") == "private"
        assert plan.eps_bounds == (0.1 * kw["epsilon"] if private_bounds else 0.0)
    else:
        assert est.privacy_guarantee_ == "none" and plan.eps_bounds == 0.0
