"""The patient as the privacy unit: validation of groups= and max_rows_per_group, the
uniformly random contribution bounding, the simulator of longitudinal records and the
group-level sensitivity (brute force)."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.mechanisms.sensitivity import (
    count_sensitivity,
    group_sensitivity,
    sufficient_statistics_sensitivity,
)
from skdp.utils._groups import (
    GROUPS_HELP,
    bound_contributions,
    check_groups,
    check_max_rows_per_group,
)


@pytest.mark.parametrize(
    "groups",
    [
        [3, 3, 7, 1, 7],
        np.array([3.0, 3.0, 7.0, 1.0, 7.0]),
        ["b", "b", "c", "a", "c"],
        pd.Series(["b", "b", "c", "a", "c"]),
        pd.Series([3, 3, 7, 1, 7], dtype="category"),
        [10, 10, 20, 30, 20],
    ],
)
def test_check_groups_codes_the_labels(groups):
    codes = check_groups(groups, 5)
    assert codes.dtype == np.int64 and codes.shape == (5,)
    # same label -> same code, different labels -> different codes
    assert codes[0] == codes[1] and codes[2] == codes[4]
    assert len({codes[0], codes[2], codes[3]}) == 3


@pytest.mark.parametrize(
    ("groups", "error", "match"),
    [
        ([1, 2, 3], ValueError, "3 labels for 5 rows"),
        ([1.0, np.nan, 2.0, 2.0, 3.0], ValueError, "missing or non-finite"),
        (["a", None, "b", "b", "c"], ValueError, "missing or non-finite labels"),
        ([{"id": 1}] * 5, TypeError, "hashable"),
        (np.zeros((5, 2)), ValueError, "1-d"),
        ("abcde", TypeError, "one label per row"),
        (7, TypeError, "one label per row"),
    ],
)
def test_bad_groups_are_refused_naming_the_parameter(groups, error, match):
    with pytest.raises(error, match=match) as info:
        check_groups(groups, 5)
    assert "groups" in str(info.value)
    assert "{'id': 1}" not in str(info.value)  # never a label in a message


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "3", None])
def test_bad_max_rows_per_group_is_refused(value):
    with pytest.raises((ValueError, TypeError), match="max_rows_per_group"):
        check_max_rows_per_group(value)
    assert check_max_rows_per_group(3.0) == 3 and check_max_rows_per_group(np.int64(2)) == 2
    assert "max_rows_per_group" in GROUPS_HELP and "protocol" in GROUPS_HELP


def test_bounding_keeps_at_most_k_rows_per_group_uniformly_at_random():
    """Every group keeps min(k, its size) rows; each row of a group of size m is kept
    with probability k / m (every subset equally likely), whatever the row order."""
    codes = np.array([0] * 6 + [1] * 2 + [2] * 1 + [0] * 2)  # group 0 has 8 rows
    k, trials = 3, 6000
    hits = np.zeros(codes.shape[0])
    rng = np.random.default_rng(0)
    subsets = {}
    for _ in range(trials):
        keep = bound_contributions(codes, k, rng)
        assert np.all(np.diff(keep) > 0)
        counts = np.bincount(codes[keep], minlength=3)
        assert counts.tolist() == [3, 2, 1]
        hits[keep] += 1
        key = tuple(keep[codes[keep] == 0])
        subsets[key] = subsets.get(key, 0) + 1
    p = hits / trials
    np.testing.assert_allclose(p[codes == 0], 3 / 8, atol=0.03)
    np.testing.assert_allclose(p[codes != 0], 1.0)
    # the 56 subsets of 3 of group 0's 8 rows are about equally likely (chi-square)
    assert len(subsets) == math.comb(8, 3)
    expected = trials / math.comb(8, 3)
    chi2 = sum((c - expected) ** 2 / expected for c in subsets.values())
    assert chi2 < 100  # 55 degrees of freedom: P(chi2 > 100) < 1e-3


def test_group_sensitivity_brute_force():
    """k rows added at once move a sum of per-row terms by at most k times the row
    sensitivity (L1 and L2), attained by k equal corner rows: enumerated on the corners
    of the box for the least-squares statistics (p = 2) and for a count."""
    p, w = 2, 1.5
    corners = list(itertools.product([-1.0, 1.0], repeat=p + 1))

    def terms(z):
        x, y = np.r_[z[:p], 1.0], z[p]
        rows, cols = np.triu_indices(p + 1)
        keep = ~((rows == p) & (cols == p))
        return np.r_[np.outer(x, x)[rows[keep], cols[keep]], w * y * x]

    for norm, order in (("l1", 1), ("l2", 2)):
        row = sufficient_statistics_sensitivity(p, target_weight=w, norm=norm)
        for k in (1, 2, 3):
            bound = group_sensitivity(row, k)
            worst = max(
                np.linalg.norm(sum(terms(z) for z in combo), ord=order)
                for combo in itertools.combinations_with_replacement(corners, k)
            )
            assert worst <= bound * (1 + 1e-12)
            assert worst == pytest.approx(bound, rel=1e-12)  # tight
    assert group_sensitivity(count_sensitivity(), 4) == 4.0
    with pytest.raises(ValueError, match="max_rows_per_group"):
        group_sensitivity(1.0, 0)


def test_longitudinal_simulator_shapes_bounds_and_reproducibility():
    X, y, event, groups = make_longitudinal_ehr(300, mean_visits=5, random_state=0)
    n_rows = X.shape[0]
    assert y.shape == event.shape == groups.shape == (n_rows,)
    assert set(np.unique(groups)) == set(range(300))
    visits = np.bincount(groups)
    assert visits.min() >= 1 and visits.max() <= 20 and 4 < visits.mean() < 6
    lo, hi = LONGITUDINAL_EHR_BOUNDS(4)
    assert np.all(X >= lo) and np.all(X <= hi) and np.all((y >= 0) & (y <= 150))
    assert 0.1 < event.mean() < 0.6
    # a patient's visits: age grows with the visit, sex is constant
    first = np.flatnonzero(visits >= 3)[0]
    rows = X[groups == first]
    assert np.all(np.diff(rows[:, 0]) >= 0) and np.all(rows[:, 1] == rows[0, 1])
    again = make_longitudinal_ehr(300, mean_visits=5, random_state=0)
    np.testing.assert_array_equal(X, again[0])
    with pytest.raises(ValueError, match="n_features"):
        make_longitudinal_ehr(10, n_features=1)
