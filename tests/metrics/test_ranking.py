"""Exact values, input handling and noise calibration of the DP AUC / AP / accuracy."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

from skdp.metrics import (
    binormal_roc_curve,
    dp_accuracy_score,
    dp_average_precision_score,
    dp_roc_auc_score,
)
from skdp.metrics._smooth import _exact_auc_ap

INF = math.inf


def auc_oracle(scores, labels):
    """Pessimistic AUC (Lantz 2016, eq. 7.1): a tied pair counts 0."""
    pos = [s for s, lab in zip(scores, labels, strict=True) if lab]
    neg = [s for s, lab in zip(scores, labels, strict=True) if not lab]
    if not pos or not neg:
        return 0.5
    return sum(x < y for x in neg for y in pos) / (len(pos) * len(neg))


def ap_oracle(scores, labels):
    """Pessimistic AP (Lantz 2016, eq. 7.2): negatives rank above tied positives."""
    pos = sorted((s for s, lab in zip(scores, labels, strict=True) if lab), reverse=True)
    neg = [s for s, lab in zip(scores, labels, strict=True) if not lab]
    if not pos:
        return 0.0
    return sum(j / (j + sum(x >= y for x in neg)) for j, y in enumerate(pos, start=1)) / len(pos)


@st.composite
def binary_problems(draw, ties=False, min_size=2):
    N = draw(st.integers(min_size, 60))
    labels = draw(st.lists(st.integers(0, 1), min_size=N, max_size=N))
    if ties:
        # heavy ties: a few levels (sometimes one), as integers or as probabilities
        levels = draw(st.integers(0, 4))
        scores = draw(st.lists(st.integers(0, levels), min_size=N, max_size=N))
        if draw(st.booleans()):
            scores = [v / 7.0 for v in scores]
    else:
        scores = draw(
            st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=N, max_size=N, unique=True)
        )
    return np.asarray(labels), np.asarray(scores, dtype=float)


# ------------------------------------------------------------------------ exact values


@given(binary_problems(), st.sampled_from(["sklearn", "pessimistic"]))
def test_exact_values_equal_sklearn_without_ties(problem, ties):
    """Without ties both conventions give scikit-learn's values."""
    y, s = problem
    if y.min() == y.max():
        return
    kw = {"epsilon": INF, "ties": ties}
    assert dp_roc_auc_score(y, s, **kw) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert dp_average_precision_score(y, s, **kw) == pytest.approx(
        average_precision_score(y, s), abs=1e-12
    )


@given(binary_problems(ties=True))
def test_default_equals_sklearn_with_heavy_ties(problem):
    """The default (ties="sklearn") at epsilon=inf is roc_auc_score / average_precision_score
    on data with heavy ties (a few score levels, constant scores included)."""
    y, s = problem
    if y.min() == y.max():  # scikit-learn raises (AUC) or warns (AP) there
        return
    assert dp_roc_auc_score(y, s, epsilon=INF) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert dp_average_precision_score(y, s, epsilon=INF) == pytest.approx(
        average_precision_score(y, s), abs=1e-12
    )
    # the same through pos_label and string labels
    labels = np.where(y == 1, "yes", "no")  # scikit-learn takes the larger label, "yes"
    assert dp_roc_auc_score(labels, s, epsilon=INF, pos_label="yes") == pytest.approx(
        roc_auc_score(labels, s), abs=1e-12
    )


@pytest.mark.filterwarnings("ignore:No positive class found")
@given(binary_problems(ties=True, min_size=1))
@example((np.zeros(55, dtype=int), np.repeat([0.0, 1.0, 2.0], [32, 11, 12])))
def test_single_class_keeps_its_documented_values(problem):
    """One class only: AUC 0.5 (scikit-learn raises), AP 0 without positives and 1
    without negatives (scikit-learn's values, with a warning); never an exception."""
    y, s = problem
    for ties in ("sklearn", "pessimistic"):
        for yy in (np.zeros_like(y), np.ones_like(y)):
            assert dp_roc_auc_score(yy, s, epsilon=INF, ties=ties) == 0.5
            ap = dp_average_precision_score(yy, s, epsilon=INF, ties=ties)
            assert ap == float(yy[0])
            # scikit-learn sums its precision steps in floating point: with 55 positive
            # rows over three score levels it returns 0.9999999999999999 (hypothesis's
            # "deep" profile found it), where skdp's value is the documented exact 1
            assert ap == pytest.approx(average_precision_score(yy, s), abs=1e-12)


@given(binary_problems(ties=True, min_size=1))
def test_pessimistic_values_follow_negatives_first(problem):
    """ties="pessimistic" follows (7.1)/(7.2) with negatives ranked first, and is never
    above the default."""
    y, s = problem
    kw = {"epsilon": INF, "ties": "pessimistic"}
    auc_p = dp_roc_auc_score(y, s, **kw)
    ap_p = dp_average_precision_score(y, s, **kw)
    assert auc_p == pytest.approx(auc_oracle(s, y), abs=1e-12)
    assert ap_p == pytest.approx(ap_oracle(s, y), abs=1e-12)
    assert auc_p <= dp_roc_auc_score(y, s, epsilon=INF) + 1e-12
    assert ap_p <= dp_average_precision_score(y, s, epsilon=INF) + 1e-12
    # breaking every tie by putting the negatives above the positives changes nothing
    s_broken = s + np.where(y == 0, 0.25 / 7, 0.0)
    auc, ap, _ = _exact_auc_ap(y == 1, s, "pessimistic")
    auc_b, ap_b, _ = _exact_auc_ap(y == 1, s_broken, "pessimistic")
    assert auc == pytest.approx(auc_b) and ap == pytest.approx(ap_b)


def test_ties_conventions_on_small_examples():
    y = np.array([0, 1, 0, 1])
    s = np.array([0.5, 0.5, 0.1, 0.9])
    assert roc_auc_score(y, s) == 0.875  # half credit for the tie
    assert dp_roc_auc_score(y, s, epsilon=INF) == 0.875
    assert dp_roc_auc_score(y, s, epsilon=INF, ties="pessimistic") == 0.75
    # tied scores form one threshold of the AP: both tied positives get precision 2/3
    y, s = np.array([0, 1, 1]), np.array([0.9, 0.5, 0.5])
    assert dp_average_precision_score(y, s, epsilon=INF) == pytest.approx(2 / 3)
    assert average_precision_score(y, s) == pytest.approx(2 / 3)
    assert dp_average_precision_score(y, s, epsilon=INF, ties="pessimistic") == pytest.approx(
        (1 / 2 + 2 / 3) / 2
    )


def test_ties_option_checked():
    for fn in (dp_roc_auc_score, dp_average_precision_score):
        with pytest.raises(ValueError, match="ties"):
            fn([0, 1], [0.1, 0.2], epsilon=1.0, ties="average")
        with pytest.raises(ValueError, match="ties"):
            fn([0, 1], [0.1, 0.2], epsilon=INF, ties=None)


def test_issue_examples_constant_and_binary_scores():
    """Constant scores: DP AUC near 0.5 (was 0.000 with the pessimistic rule); a binary
    score: the DP AUC centres on scikit-learn's value, not on the pessimistic one."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 2000)
    const = np.full(2000, 0.3)
    out = [dp_roc_auc_score(y, const, epsilon=10.0, random_state=k) for k in range(50)]
    assert abs(np.median(out) - 0.5) < 0.01
    assert dp_roc_auc_score(y, const, epsilon=INF, ties="pessimistic") == 0.0
    binary = np.where(rng.random(2000) < 0.85, y, 1 - y)  # 85 % correct 0/1 predictions
    exact = roc_auc_score(y, binary)
    out = [dp_roc_auc_score(y, binary, epsilon=10.0, random_state=k) for k in range(50)]
    assert abs(np.median(out) - exact) < 0.01
    assert dp_roc_auc_score(y, binary, epsilon=INF, ties="pessimistic") < exact - 0.1


# A timing test, so it stays out of the default run (speed is measured in
# benchmarks/scorers.py). It reads the process's CPU time, not the wall clock: with
# wall-clock time it flaked whenever another process shared the cores (ratios of 42.9,
# and 90.7 with pytest-xdist's two workers on 2 cores).
@pytest.mark.slow
@pytest.mark.parametrize("ties", ["sklearn", "pessimistic"])
def test_exact_metric_is_n_log_n(ties):
    """_exact_auc_ap is O(N log N): 8 times the rows cost 13-20 times the CPU time here
    (cache effects included; measured with and without two busy processes beside it),
    where a quadratic algorithm would cost 64 times, with heavy ties and without. From
    10**5 rows (in cache) to 10**6 the ratio was 17-60 on this machine, too close to a
    quadratic's 100 to tell the two apart."""

    def best_time(N, levels):
        rng = np.random.default_rng(N)
        pos = rng.random(N) < 0.3
        scores = rng.integers(0, levels, N).astype(float) if levels else rng.random(N)
        best = math.inf
        for _ in range(3):
            t0 = time.process_time()
            _exact_auc_ap(pos, scores, ties)
            best = min(best, time.process_time() - t0)
        return best

    for levels in (3, None):
        ratio = best_time(2_000_000, levels) / best_time(250_000, levels)
        assert ratio < 32, ratio


def test_degenerate_classes_exact_values():
    """Spec §5.1: AUC = 0.5 without one class; AP = 0 without positives, 1 without negatives."""
    assert dp_roc_auc_score([0, 0, 0], [0.1, 0.2, 0.3], epsilon=INF) == 0.5
    assert dp_roc_auc_score([1, 1], [0.1, 0.2], epsilon=INF) == 0.5
    assert dp_average_precision_score([0, 0, 0], [0.1, 0.2, 0.3], epsilon=INF) == 0.0
    assert dp_average_precision_score([1, 1], [0.1, 0.2], epsilon=INF) == 1.0
    assert dp_roc_auc_score([1], [0.3], epsilon=INF) == 0.5


# ---------------------------------------------------------------------- input handling


def test_label_conventions():
    s = np.array([0.1, 0.7, 0.4, 0.9])
    ref = dp_roc_auc_score([0, 1, 0, 1], s, epsilon=INF)
    assert dp_roc_auc_score([-1, 1, -1, 1], s, epsilon=INF) == ref
    assert dp_roc_auc_score([False, True, False, True], s, epsilon=INF) == ref
    assert dp_roc_auc_score(["n", "p", "n", "p"], s, epsilon=INF, pos_label="p") == ref
    assert dp_roc_auc_score(["n", "p", "n", "p"], s, epsilon=INF, pos_label="n") == 1 - ref
    assert dp_roc_auc_score(["n", "n", "n", "n"], s, epsilon=INF, pos_label="p") == 0.5


@pytest.mark.parametrize(
    ("y", "s", "kw", "match"),
    [
        (["a", "b"], [0.1, 0.2], {}, "pos_label"),
        ([0, 1, 2], [0.1, 0.2, 0.3], {}, "binary"),
        ([2, 3], [0.1, 0.2], {}, "pos_label"),
        ([0, 1], [0.1, 0.2], {"pos_label": "yes"}, "pos_label"),
        ([0, 1], [0.1, np.nan], {}, "y_score contains NaN"),
        ([0, 1], [0.1, np.inf], {}, "y_score contains NaN or infinity"),
        ([0.0, np.nan], [0.1, 0.2], {}, "y_true contains NaN"),
        ([0, 1, 1], [0.1, 0.2], {}, "inconsistent"),
        ([], [], {}, "empty"),
        ([0, 1], ["a", "b"], {}, "numeric"),
        ([0, 1], [0.1, 0.2], {"gamma": 1.0}, "gamma"),
    ],
)
def test_bad_input_raises_clear_value_error(y, s, kw, match):
    for fn in (dp_roc_auc_score, dp_average_precision_score):
        with pytest.raises(ValueError, match=match):
            fn(y, s, epsilon=1.0, random_state=0, **kw)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.0, 0.0), (-1.0, 0.0), (1.0, 1.0), (1, -0.1)])
def test_bad_privacy_parameters(epsilon, delta):
    with pytest.raises(ValueError):
        dp_roc_auc_score([0, 1], [0.1, 0.2], epsilon=epsilon, delta=delta)
    with pytest.raises(ValueError):
        dp_accuracy_score([0, 1], [0, 1], epsilon=epsilon, delta=delta)


def test_error_messages_name_no_value():
    with pytest.raises(ValueError) as info:
        dp_roc_auc_score([0, 1, 0], [0.25, 123.456, np.nan], epsilon=1.0)
    assert "123.456" not in str(info.value) and "0.25" not in str(info.value)


def test_sensitivity_form_checked():
    with pytest.raises(ValueError, match="sensitivity_form"):
        dp_average_precision_score([0, 1], [0.1, 0.2], epsilon=1.0, sensitivity_form="x")


# ------------------------------------------------------------------------ noisy releases


@pytest.mark.filterwarnings("ignore::skdp.exceptions.DeltaTooLargeWarning")
@pytest.mark.parametrize("fn", [dp_roc_auc_score, dp_average_precision_score])
@pytest.mark.parametrize("delta", [0.0, 1e-3])
@pytest.mark.parametrize(
    ("y", "s"),
    [([0], [0.3]), ([1], [0.3]), ([0, 0, 0], [1, 2, 3]), ([1, 1], [1, 1]), ([0, 1], [1, 1])],
)
def test_single_class_and_tiny_inputs_never_raise_or_nan(fn, delta, y, s):
    """Spec §5.6 items 5 and 7: outputs in [0, 1], never NaN, no exception for n=0, m=0, N=1."""
    for seed in range(20):
        out = fn(y, s, epsilon=0.5, delta=delta, random_state=seed)
        assert isinstance(out, float) and 0.0 <= out <= 1.0


def _simulated(n, m, seed=0):
    rng = np.random.default_rng(seed)
    y = np.r_[np.zeros(m, dtype=int), np.ones(n, dtype=int)]
    s = np.r_[rng.normal(0, 1, m), rng.normal(1.2, 1, n)]
    return y, s


def test_reproducible_with_seed_and_fresh_without():
    y, s = _simulated(50, 50)
    # (Laplace variant with a budget that keeps the output away from the clamp at 0 and 1)
    kw = {"epsilon": 5.0, "delta": 1e-6}
    a = dp_roc_auc_score(y, s, random_state=3, **kw)
    assert a == dp_roc_auc_score(y, s, random_state=3, **kw)
    assert a != dp_roc_auc_score(y, s, random_state=4, **kw)
    draws = {dp_roc_auc_score(y, s, **kw) for _ in range(5)}
    assert len(draws) == 5


def test_tie_option_is_bound_into_the_seed():
    """Under one int seed the two conventions draw independent noise (the option is part
    of the seed material), and each reproduces itself."""
    y, s = _simulated(50, 50)  # no ties: both conventions have the same exact value
    for fn in (dp_roc_auc_score, dp_average_precision_score):
        kw = {"epsilon": 5.0, "delta": 1e-6, "random_state": 3}
        a = fn(y, s, ties="sklearn", **kw)
        b = fn(y, s, ties="pessimistic", **kw)
        assert a != b
        assert a == fn(y, s, **kw) and b == fn(y, s, ties="pessimistic", **kw)


def _errors(fn, y, s, n_draws, **kw):
    exact = fn(y, s, epsilon=INF, ties=kw.get("ties", "sklearn"))
    out = np.array([fn(y, s, random_state=seed, **kw) for seed in range(n_draws)])
    return out - exact, exact


@pytest.mark.filterwarnings("ignore::skdp.exceptions.DeltaTooLargeWarning")
def test_laplace_noise_scale_matches_worked_table():
    """AUC, N=1000, n=100, eps=1, delta=0.01: Laplace noise scale 0.02 (spec §5.5 table).

    The mean absolute error of Laplace(b) is b; with 2000 draws its standard error is 2 %.
    """
    y, s = _simulated(100, 900)
    err, exact = _errors(dp_roc_auc_score, y, s, 2000, epsilon=1.0, delta=0.01)
    assert 0.1 < exact < 0.9
    assert np.mean(np.abs(err)) == pytest.approx(0.02, rel=0.08)


def test_cauchy_noise_scale_matches_worked_table():
    """AUC, N=1000, n=100, eps=1, delta=0: Cauchy noise scale 0.06 (median |error| = scale)."""
    y, s = _simulated(100, 900)
    err, _ = _errors(dp_roc_auc_score, y, s, 2000, epsilon=1.0)
    assert np.median(np.abs(err)) == pytest.approx(0.06, rel=0.08)


@pytest.mark.filterwarnings("ignore::skdp.exceptions.DeltaTooLargeWarning")
def test_ap_noise_scale_log_form_matches_worked_table():
    """AP (pessimistic ties, log form), N=200, n=100, eps=1, delta=0.01: scale 0.184605
    (Lantz 2016 ch. 7 worked values); check before clamping."""
    y, s = _simulated(100, 100)
    err, exact = _errors(
        dp_average_precision_score,
        y,
        s,
        2000,
        epsilon=1.0,
        delta=0.01,
        sensitivity_form="log",
        ties="pessimistic",
    )
    # Clamping distorts the tails, but the median |error| of Laplace(b) is b ln 2 and the
    # exact AP is more than b ln 2 away from both ends, so the median is untouched.
    assert min(exact, 1 - exact) > 0.184605 * math.log(2) * 1.2
    assert np.median(np.abs(err)) == pytest.approx(0.184605 * math.log(2), rel=0.08)


@pytest.mark.filterwarnings("ignore::skdp.exceptions.DeltaTooLargeWarning")
def test_ap_noise_scale_sklearn_ties():
    """AP (default ties), N=200, n=100, eps=1, delta=0.01: Laplace scale 2 S* with
    S* = LS_AP(100) = (H_100 - 1) / 99 = 0.04230, less than half the pessimistic 0.0839."""
    from skdp.mechanisms.sensitivity import ap_local_sensitivity, ap_smooth_sensitivity

    beta = 1.0 / (2.0 * math.log(200.0))
    s_star = ap_smooth_sensitivity(100, 200, beta)
    assert s_star == pytest.approx(ap_local_sensitivity(100)) and s_star == pytest.approx(
        0.0422967, rel=1e-5
    )
    y, s = _simulated(100, 100)
    err, _ = _errors(dp_average_precision_score, y, s, 2000, epsilon=1.0, delta=0.01)
    assert np.median(np.abs(err)) == pytest.approx(2 * s_star * math.log(2), rel=0.08)


def test_delta_at_least_one_over_n_warns():
    from skdp.exceptions import DeltaTooLargeWarning

    with pytest.warns(DeltaTooLargeWarning):
        dp_roc_auc_score([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], epsilon=1.0, delta=0.3)


def test_large_epsilon_converges_to_exact():
    y, s = _simulated(200, 300)
    for fn in (dp_roc_auc_score, dp_average_precision_score):
        exact = fn(y, s, epsilon=INF)
        for delta in (0.0, 1e-6):
            out = [fn(y, s, epsilon=1e5, delta=delta, random_state=k) for k in range(20)]
            assert np.median(np.abs(np.array(out) - exact)) < 1e-3


def test_accuracy_noise_scale():
    """Accuracy: Laplace(1 / (N eps)); mean |error| = 1 / (N eps)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 500)
    p = np.where(rng.random(500) < 0.7, y, (y + 1) % 3)
    exact = dp_accuracy_score(y, p, epsilon=INF)
    assert exact == pytest.approx(np.mean(y == p))
    out = np.array([dp_accuracy_score(y, p, epsilon=0.5, random_state=k) for k in range(3000)])
    assert np.mean(np.abs(out - exact)) == pytest.approx(1 / (500 * 0.5), rel=0.08)
    assert np.all((out >= 0) & (out <= 1))


def test_accuracy_bad_input():
    with pytest.raises(ValueError):
        dp_accuracy_score([0, 1], [0, 1, 1], epsilon=1.0)
    with pytest.raises(ValueError, match="empty"):
        dp_accuracy_score([], [], epsilon=1.0)
    with pytest.raises(ValueError, match="NaN"):
        dp_accuracy_score([0.0, np.nan], [0.0, 1.0], epsilon=1.0)


class RecordingLedger:
    """Duck-typed stand-in recording spends (the real PrivacyLedger is tested in test_scorer)."""

    def __init__(self):
        self.calls = []

    def spend(self, epsilon, delta=0.0, *, label=None):
        self.calls.append((epsilon, delta, label))


def test_functions_charge_the_ledger_once_per_call():
    led = RecordingLedger()
    y, s = _simulated(20, 20)
    dp_roc_auc_score(y, s, epsilon=0.3, delta=1e-4, ledger=led, random_state=0)
    dp_average_precision_score(y, s, epsilon=0.2, ledger=led, random_state=0)
    dp_accuracy_score(y, y, epsilon=0.1, delta=1e-3, ledger=led, random_state=0)
    assert [(e, d) for e, d, _ in led.calls] == [(0.3, 1e-4), (0.2, 0.0), (0.1, 0.0)]
    # invalid input is rejected before anything is charged
    with pytest.raises(ValueError):
        dp_roc_auc_score(y, s[:-1], epsilon=0.3, ledger=led)
    assert len(led.calls) == 3


# ------------------------------------------------------------------------- binormal ROC


@given(st.floats(0.0, 1.0))
def test_binormal_roc_curve_properties(auc):
    """Spec §5.6 item 8: monotone, from (0,0) to (1,1), area = AUC."""
    fpr, tpr = binormal_roc_curve(auc, n_points=20001)
    assert fpr[0] == 0 and tpr[0] == 0 and fpr[-1] == 1 and tpr[-1] == 1
    assert np.all(np.diff(tpr) >= 0)
    area = np.trapezoid(tpr, fpr)
    assert area == pytest.approx(min(max(auc, 1e-6), 1 - 1e-6), abs=2e-3)


def test_binormal_roc_curve_matches_binormal_model_and_checks_input():
    # Two unit-variance normals one unit apart: AUC = Phi(1/sqrt 2), ROC(x) = Phi(1 + Phi^-1(x))
    from scipy.stats import norm

    auc = norm.cdf(1 / math.sqrt(2))
    fpr, tpr = binormal_roc_curve(auc, fpr=[0.1, 0.5])
    np.testing.assert_allclose(tpr, norm.cdf(1 + norm.ppf([0.1, 0.5])), rtol=1e-9)
    with pytest.raises(ValueError):
        binormal_roc_curve(0.7, fpr=[0.5, 1.5])
    with pytest.raises(ValueError):
        binormal_roc_curve(np.nan)
    with pytest.raises(ValueError):
        binormal_roc_curve(0.7, n_points=1)


def test_gamma_three_noise_scale():
    """gamma = 3: noise 8 S / eps times eta with density proportional to 1 / (1 + |z|^3).

    AUC, N = 1000, n = 100, eps = 1: beta = 1/8, S* = LS = 0.01, scale = 0.08. The median
    of |eta| is found by integrating the density numerically.
    """
    from scipy.integrate import quad
    from scipy.optimize import brentq

    h = lambda z: 1.0 / (1.0 + abs(z) ** 3)  # noqa: E731
    total = 2 * quad(h, 0, np.inf)[0]
    median_abs = brentq(lambda t: 2 * quad(h, 0, t)[0] / total - 0.5, 0.01, 10)
    y, s = _simulated(100, 900)
    err, _ = _errors(dp_roc_auc_score, y, s, 2000, epsilon=1.0, gamma=3.0)
    assert np.median(np.abs(err)) == pytest.approx(0.08 * median_abs, rel=0.08)
