"""Audits end to end on controls with known epsilon (T18 direction test, T19 LiRA)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.auditing import (
    AuditResult,
    LaplaceCountRelease,
    MemorizingClassifier,
    MemorizingDensity,
    RandomizedResponseRelease,
    distinguishing_audit,
    lira_attack,
    loss_threshold_attack,
    membership_scores,
    one_run_audit,
    roc_summary,
)

IDS = np.arange(100).reshape(-1, 1)


@pytest.mark.parametrize("control", [RandomizedResponseRelease, LaplaceCountRelease])
@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_distinguishing_audit_bound_below_true_epsilon(control, eps):
    res = distinguishing_audit(
        control(epsilon=eps, n_ids=120), IDS, canary_X=[[110]], n_trials=400, random_state=0
    )
    assert isinstance(res, AuditResult)
    assert res.method == "independent-trials"
    assert res.epsilon_claimed == eps
    assert 0.2 * eps < res.epsilon_lb <= eps
    assert res.consistent
    c = res.details["confusion"]
    assert sum(c.values()) == 400 - res.details["n_calibration"]


def test_distinguishing_audit_catches_missing_noise():
    """A Laplace count with a fifth of its noise (true eps 5) claiming eps=1 is caught."""
    res = distinguishing_audit(
        LaplaceCountRelease(epsilon=1.0, n_ids=120, noise_factor=0.2),
        IDS,
        canary_X=[[110]],
        n_trials=200,
        random_state=0,
    )
    assert res.epsilon_lb > 1.0
    assert res.consistent is False
    no_noise = distinguishing_audit(
        LaplaceCountRelease(epsilon=1.0, n_ids=120, noise_factor=0.0),
        IDS,
        canary_X=[[110]],
        n_trials=100,
        random_state=0,
    )
    # perfect separation of the evaluation trials: the bound is limited by their number
    # only, log(tpr_lo / fpr_hi) with one-sided 97.5% bounds 0.025**(1/n) and 1 - that
    c = no_noise.details["confusion"]
    assert c["fn"] == c["fp"] == 0
    tpr_lo, fpr_hi = 0.025 ** (1 / c["tp"]), 1 - 0.025 ** (1 / c["tn"])
    expected = max(math.log(tpr_lo / fpr_hi), math.log((1 - fpr_hi) / (1 - tpr_lo)))
    assert no_noise.epsilon_lb == pytest.approx(expected)
    assert no_noise.auc == 1.0


def test_distinguishing_audit_default_canary_and_reproducibility():
    X = np.random.default_rng(0).normal(size=(30, 2))
    a = distinguishing_audit(MemorizingDensity(), X, n_trials=100, random_state=3)
    b = distinguishing_audit(MemorizingDensity(), X, n_trials=100, random_state=3)
    np.testing.assert_array_equal(a.details["scores"], b.details["scores"])
    assert a.epsilon_lb == b.epsilon_lb > 1.0
    assert a.epsilon_claimed is None and a.consistent is None


def test_distinguishing_audit_supervised_requires_canary_y():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.arange(30) % 2
    with pytest.raises(ValueError, match="canary_y"):
        distinguishing_audit(MemorizingClassifier(), X, y, canary_X=[[0, 0]], n_trials=20)
    res = distinguishing_audit(
        MemorizingClassifier(), X, y, canary_X=[[5, 5]], canary_y=[1], n_trials=100, random_state=0
    )
    assert res.epsilon_lb > 1.0


def test_one_run_audit_randomized_response():
    X = np.arange(5000).reshape(-1, 1)
    res = one_run_audit(RandomizedResponseRelease(epsilon=2.0, n_ids=5000), X, random_state=0)
    assert res.method == "one-run"
    assert res.details["m"] == 5000 and res.details["r"] == 1000
    assert 1.0 < res.epsilon_lb <= 2.0
    assert 0.8 < res.auc < 0.95


def test_one_run_direction_memorizing_model():
    """T18 direction test: a memorising model gives eps_lb > 1 (guards §4.7 a-b bugs)."""
    X = np.random.default_rng(0).normal(size=(2000, 3))
    res = one_run_audit(MemorizingDensity(), X, random_state=0)
    assert res.epsilon_lb > 4.0
    assert res.auc == 1.0
    # the inverted guessing of the companion code (§4.7 b) gives nothing: same data,
    # scores negated
    inv = one_run_audit(
        MemorizingDensity(), X, score=lambda e, X_, y_: -e.score_samples(X_), random_state=0
    )
    assert inv.epsilon_lb == 0.0


def test_one_run_canary_subset_and_abstention():
    X = np.arange(3000).reshape(-1, 1)
    res = one_run_audit(
        RandomizedResponseRelease(epsilon=1.0, n_ids=3000),
        X,
        n_canaries=1000,
        k_pos=50,
        k_neg=0,
        random_state=1,
    )
    assert res.details["m"] == 1000 and res.details["r"] == 50
    assert res.epsilon_lb <= 1.0
    with pytest.raises(ValueError):
        one_run_audit(RandomizedResponseRelease(n_ids=3000), X, n_canaries=0)
    with pytest.raises(ValueError):
        one_run_audit(RandomizedResponseRelease(n_ids=3000), X, k_pos=2000, k_neg=2000)


def test_loss_threshold_attack_is_one_run():
    X = np.random.default_rng(1).normal(size=(500, 2))
    a = loss_threshold_attack(MemorizingDensity(), X, random_state=4)
    b = one_run_audit(MemorizingDensity(), X, random_state=4)
    assert a.epsilon_lb == b.epsilon_lb > 1.0


def test_no_privacy_claim_on_data_independent_mechanism():
    """A mechanism that ignores its input: the audit bound is 0 (at 95%)."""
    X = np.arange(2000).reshape(-1, 1)
    res = one_run_audit(RandomizedResponseRelease(epsilon=1e-9, n_ids=2000), X, random_state=0)
    assert res.epsilon_lb == 0.0
    assert 0.45 < res.auc < 0.55


def _binary_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)), rng.integers(0, 2, n)


def test_lira_memorizing_classifier():
    """T19: a memorising mechanism gives TPR@1%FPR >= 20%."""
    X, y = _binary_data()
    for variant in ("online", "offline"):
        res = lira_attack(
            MemorizingClassifier(), X, y, n_shadow=8, n_targets=2, variant=variant, random_state=0
        )
        assert res.method == "lira"
        assert res.tpr_at_fpr[1e-2] >= 0.2
        assert res.epsilon_lb > 1.0
        assert len(res.details["per_target"]) == 2


def test_lira_data_independent_mechanism_is_random():
    """T19: a data-independent mechanism gives AUC in [0.45, 0.55], TPR@1% near 1%."""
    X = np.arange(1000).reshape(-1, 1)
    res = lira_attack(
        RandomizedResponseRelease(epsilon=1e-9, n_ids=1000),
        X,
        n_shadow=8,
        n_targets=4,
        random_state=0,
    )
    assert 0.45 <= res.auc <= 0.55
    n_neg = int((~res.details["target_masks"]).sum())
    # 99.9% binomial range for the TPR at an FPR of 1%
    assert res.tpr_at_fpr[1e-2] <= 0.01 + 3.3 * math.sqrt(0.01 * 0.99 / n_neg) + 0.01
    assert res.epsilon_lb == 0.0


def test_lira_dp_control_bound_valid():
    X = np.arange(2000).reshape(-1, 1)
    res = lira_attack(
        RandomizedResponseRelease(epsilon=1.0, n_ids=2000),
        X,
        n_shadow=8,
        n_targets=2,
        random_state=0,
    )
    assert 0 < res.epsilon_lb <= 1.0


def test_lira_shadow_splits_distinct_and_seeded():
    """T19 seed audit: shadow splits pairwise distinct, seeds distinct, exactly half."""
    X, y = _binary_data(n=60)
    res = lira_attack(MemorizingClassifier(), X, y, n_shadow=16, n_targets=1, random_state=5)
    masks = res.details["shadow_masks"]
    assert len({m.tobytes() for m in masks}) == 16
    assert np.all(masks.sum(1) == 30)
    assert len(set(res.details["shadow_seeds"])) == 16
    again = lira_attack(MemorizingClassifier(), X, y, n_shadow=16, n_targets=1, random_state=5)
    np.testing.assert_array_equal(masks, again.details["shadow_masks"])
    np.testing.assert_array_equal(res.details["scores"], again.details["scores"])


def test_stable_logit_matches_log_odds():
    """T19: the logit-scaled confidence equals log p_y - log(1 - p_y)."""
    X, y = _binary_data(n=50)
    clf = MemorizingClassifier().fit(X, y)
    phi = membership_scores(clf, X[:10] + 0.3, y[:10])
    p = clf.predict_proba(X[:10] + 0.3)[np.arange(10), y[:10]]
    np.testing.assert_allclose(phi, np.log(p) - np.log(1 - p), atol=1e-9)


def test_roc_summary():
    fpr, tpr, auc, at = roc_summary([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    assert auc == 1.0 and at[1e-2] == 1.0
    _, _, auc, _ = roc_summary([1, 1], [0.1, 0.2])
    assert math.isnan(auc)


def test_membership_scores_requires_public_method():
    with pytest.raises(ValueError, match="score=callable"):
        membership_scores(object(), np.zeros((2, 1)))


@pytest.mark.slow
def test_lira_full_settings_per_example_variance():
    """Full LiRA: 64 shadows (per-example variances), 8 targets."""
    X, y = _binary_data(n=400, seed=1)
    res = lira_attack(MemorizingClassifier(), X, y, n_shadow=64, n_targets=8, random_state=0)
    assert res.details["global_variance"] is False
    assert res.tpr_at_fpr[1e-2] >= 0.2
    assert np.median(res.details["per_target_auc"]) > 0.9
    ids = np.arange(2000).reshape(-1, 1)
    null = lira_attack(
        RandomizedResponseRelease(epsilon=1e-9, n_ids=2000),
        ids,
        n_shadow=64,
        n_targets=8,
        random_state=0,
    )
    assert 0.45 <= null.auc <= 0.55
    assert null.epsilon_lb == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_distinguishing_audit_full_settings(eps):
    """4000 fits: the bound approaches the true epsilon of randomized response from below."""
    res = distinguishing_audit(
        RandomizedResponseRelease(epsilon=eps, n_ids=120),
        IDS,
        canary_X=[[110]],
        n_trials=4000,
        random_state=1,
    )
    assert 0.8 * eps < res.epsilon_lb <= eps


def test_audits_accept_dataframes():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    res = one_run_audit(MemorizingDensity(), df, random_state=0)
    assert res.epsilon_lb > 1.0
    res = distinguishing_audit(MemorizingDensity(), df.iloc[:40], n_trials=60, random_state=0)
    assert res.epsilon_lb > 0.5
    canary = pd.DataFrame({"a": [5.0], "b": [5.0]})
    res = distinguishing_audit(
        MemorizingDensity(), df.iloc[:40], canary_X=canary, n_trials=60, random_state=0
    )
    assert res.epsilon_lb > 0.5


@pytest.mark.parametrize("control", [MemorizingDensity, MemorizingClassifier])
def test_memorizing_controls_pass_sklearn_checks(control):
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(control(), on_fail=None, on_skip=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed


def test_clusterer_scored_by_public_centres():
    from sklearn.base import BaseEstimator, ClusterMixin

    class _Centres(ClusterMixin, BaseEstimator):
        def fit(self, X, y=None):
            self.cluster_centers_ = np.array([[0.0, 0.0], [3.0, 4.0]])
            return self

    est = _Centres().fit(None)
    np.testing.assert_allclose(membership_scores(est, np.array([[3.0, 0.0]])), [-3.0])


def test_one_run_loss_drop_reference():
    X = np.random.default_rng(2).normal(size=(1500, 2))
    res = one_run_audit(MemorizingDensity(), X, n_canaries=1000, reference="fixed", random_state=0)
    assert res.epsilon_lb > 1.5
    ids = np.arange(3000).reshape(-1, 1)
    res = one_run_audit(
        LaplaceCountRelease(epsilon=1.0, n_ids=3000),
        ids,
        n_canaries=2000,
        reference="fixed",
        random_state=0,
    )
    # valid: the reference has its own seed (the target's seed would cancel the noise)
    assert res.epsilon_lb <= 1.0
    with pytest.raises(ValueError, match="n_canaries"):
        one_run_audit(MemorizingDensity(), X, reference="fixed")
    with pytest.raises(ValueError, match="reference"):
        one_run_audit(MemorizingDensity(), X, n_canaries=10, reference="init")
