"""ROC AUC and average precision with the patient as the privacy unit (``groups=``,
``max_rows_per_group``): the patient-level smooth sensitivity, the random bounding, the
seed material, the ledger's unit and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.mechanisms import smooth_sensitivity_beta
from skdp.mechanisms.sensitivity import (
    ap_group_local_sensitivity,
    auc_group_local_sensitivity,
    group_count_smooth_sensitivity,
)
from skdp.metrics import _smooth, dp_average_precision_score, dp_roc_auc_score

METRICS = [dp_roc_auc_score, dp_average_precision_score]


def _data(n_patients=200, rows=4, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_patients), rows)
    y = np.repeat(rng.integers(0, 2, n_patients), rows)
    s = y + rng.normal(0, 1, y.shape[0])
    return y, s, groups


@pytest.mark.parametrize("metric", METRICS)
def test_without_groups_nothing_changes(metric):
    """groups=None (max_rows_per_group given or not): the row-level release, bit for bit."""
    y, s, _ = _data()
    for delta in (0.0, 1e-6):
        a = metric(y, s, epsilon=1.0, delta=delta, random_state=0)
        b = metric(y, s, epsilon=1.0, delta=delta, random_state=0, max_rows_per_group=3)
        assert a == b


def _spy_scale(monkeypatch):
    seen = []
    fn = _smooth._noise_parameters

    def wrapped(*args, **kw):
        out = fn(*args, **kw)
        seen.append(out)
        return out

    monkeypatch.setattr(_smooth, "_noise_parameters", wrapped)
    return seen


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_the_noise_is_calibrated_to_the_patient_level_smooth_bound(monkeypatch, delta):
    y, s, groups = _data(rows=6)
    seen = _spy_scale(monkeypatch)
    k, eps = 3, 1.0
    for metric in METRICS:
        metric(y, s, epsilon=eps, delta=delta, groups=groups, max_rows_per_group=k, random_state=0)
    n = int(y[::6].sum()) * k  # every patient has 6 >= k rows: exactly k kept
    m = 200 * k - n
    if delta == 0.0:
        beta = smooth_sensitivity_beta(eps, gamma=2.0)
        factor = 2 * (2.0 + 1) / eps
    else:
        beta = eps / (2 * math.log(2 / delta))
        factor = 2 / eps
    s_auc = group_count_smooth_sensitivity(
        lambda c: auc_group_local_sensitivity(c, c, k), min(n, m), k, beta
    )
    s_ap = group_count_smooth_sensitivity(lambda c: ap_group_local_sensitivity(c, k), n, k, beta)
    assert seen[0][0] == pytest.approx(factor * s_auc, rel=1e-12)
    assert seen[1][0] == pytest.approx(factor * s_ap, rel=1e-12)
    # larger than the row-level scale: a patient moves k rows
    seen.clear()
    for metric in METRICS:
        metric(y, s, epsilon=eps, delta=delta, random_state=0)
    assert seen[0][0] < factor * s_auc and seen[1][0] < factor * s_ap


def _one_outcome_per_patient():
    """Patient ``i`` has ``i % 4 + 1`` rows: the even ones are positives scored 1, the
    odd ones negatives scored by their patient index; at ``epsilon=inf`` the AP shows
    how many rows of each patient were kept."""
    counts = np.arange(40) % 4 + 1
    groups = np.repeat(np.arange(40), counts)
    pos = np.repeat(np.arange(40) % 2 == 0, counts)
    score = np.where(pos, 0.5, np.repeat(np.arange(40) / 40.0, counts))
    return pos.astype(int), score, groups, counts


def test_at_most_k_rows_a_patient_are_scored():
    y, score, groups, counts = _one_outcome_per_patient()
    for k in (1, 2, 4):
        w = np.minimum(counts, k)
        keep_pos = np.repeat(np.arange(40) % 2 == 0, w)
        keep_score = np.where(keep_pos, 0.5, np.repeat(np.arange(40) / 40.0, w))
        want_auc = dp_roc_auc_score(keep_pos, keep_score, epsilon=math.inf)
        want_ap = dp_average_precision_score(keep_pos, keep_score, epsilon=math.inf)
        kw = {"epsilon": math.inf, "groups": groups, "max_rows_per_group": k}
        assert dp_roc_auc_score(y, score, **kw) == pytest.approx(want_auc, rel=1e-12)
        assert dp_average_precision_score(y, score, **kw) == pytest.approx(want_ap, rel=1e-12)


def test_the_kept_rows_are_random_not_the_first_k():
    """One positive patient with rows scored 0.0 .. 0.9, 40 negatives scored 0.45: with
    k = 1 the kept row is random, so at eps=inf the AUC is 0 or 1 depending on the seed
    (the first row, scored 0, would always give 0)."""
    groups = np.r_[np.zeros(10, int), np.arange(1, 41)]
    y = np.r_[np.ones(10, int), np.zeros(40, int)]
    score = np.r_[np.arange(10) / 10.0, np.full(40, 0.45)]
    values = {
        dp_roc_auc_score(
            y, score, epsilon=math.inf, groups=groups, max_rows_per_group=1, random_state=r
        )
        for r in range(30)
    }
    assert values == {0.0, 1.0}  # the kept row scored above 0.45 or below it


@pytest.mark.parametrize("metric", METRICS)
def test_the_grouping_is_in_the_seed_material(metric):
    y, s, groups = _data()

    def release(g, seed=0):
        return metric(y, s, epsilon=1.0, groups=g, max_rows_per_group=50, random_state=seed)

    assert release(groups % 7) != release(groups % 11)
    assert release(groups % 7) == release(groups % 7)


def test_a_patient_level_call_is_charged_per_patient():
    from skdp.accounting import PrivacyLedger

    y, s, groups = _data()
    ledger = PrivacyLedger(3.0)
    dp_roc_auc_score(y, s, epsilon=1.0, groups=groups, max_rows_per_group=2, ledger=ledger)
    dp_average_precision_score(
        y, s, epsilon=1.0, delta=1e-6, groups=groups, max_rows_per_group=2, ledger=ledger
    )
    assert [e["unit"] for e in ledger.entries] == ["group", "group"]
    row_ledger = PrivacyLedger(3.0)
    dp_roc_auc_score(y, s, epsilon=1.0, ledger=row_ledger)
    with pytest.raises(ValueError, match="per row"):
        dp_roc_auc_score(y, s, epsilon=1.0, groups=groups, max_rows_per_group=2, ledger=row_ledger)
    assert [e["unit"] for e in row_ledger.entries] == ["row"]


_SECRET = "patient-7731"  # a label that must never appear in a message


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"groups": np.arange(10)}, ValueError, "needs max_rows_per_group"),
        ({"groups": np.arange(9), "max_rows_per_group": 2}, ValueError, "9 labels for 10"),
        ({"groups": [None] * 10, "max_rows_per_group": 2}, ValueError, "missing"),
        ({"groups": [[_SECRET]] * 10, "max_rows_per_group": 2}, ValueError, "1-d"),
        ({"groups": [{_SECRET: 0}] * 10, "max_rows_per_group": 2}, TypeError, "hashable"),
        ({"groups": np.arange(10), "max_rows_per_group": 0}, ValueError, "max_rows_per"),
        ({"groups": np.arange(10), "max_rows_per_group": 1.5}, ValueError, "max_rows_per"),
        ({"groups": np.arange(10), "max_rows_per_group": "2"}, TypeError, "max_rows_per"),
        ({"max_rows_per_group": -1}, ValueError, "max_rows_per_group"),
    ],
)
def test_bad_patient_level_input_is_refused(metric, kw, error, match):
    y = np.r_[np.zeros(5), np.ones(5)]
    with pytest.raises(error, match=match) as info:
        metric(y, y, epsilon=1.0, **kw)
    assert _SECRET not in str(info.value)


@pytest.mark.parametrize("metric", METRICS)
def test_dask_input_with_groups_is_bounded_on_the_workers(metric):
    """Dask labels and scores with Dask groups: each patient keeps at most k rows on the
    workers (Dask's shuffle by patient); with k at least every patient's row count all
    rows are kept, so the exact value (epsilon=inf) equals the in-memory one, and a
    private release is a valid, reproducible score."""
    da = pytest.importorskip("dask.array")
    y, s, groups = _data(n_patients=60, rows=3)
    dy, ds, dg = (da.from_array(a, chunks=45) for a in (y, s, groups))
    exact = metric(y, s, epsilon=math.inf, groups=groups, max_rows_per_group=3)
    assert metric(dy, ds, epsilon=math.inf, groups=dg, max_rows_per_group=3) == exact
    one = metric(dy, ds, epsilon=1.0, groups=dg, max_rows_per_group=2, random_state=0)
    assert 0.0 <= one <= 1.0
    assert metric(dy, ds, epsilon=1.0, groups=dg, max_rows_per_group=2, random_state=0) == one
    with pytest.raises(ValueError, match="groups is a Dask collection but the data are in"):
        metric(y, s, epsilon=1.0, groups=dg, max_rows_per_group=2)


@pytest.mark.parametrize("metric", METRICS)
def test_single_class_and_single_patient_do_not_raise(metric):
    """No class-count or patient-count dependent refusal (those counts are private)."""
    for y in (np.zeros(12, int), np.ones(12, int)):
        v = metric(y, np.arange(12.0), epsilon=1.0, groups=np.zeros(12), max_rows_per_group=3)
        assert 0.0 <= v <= 1.0
