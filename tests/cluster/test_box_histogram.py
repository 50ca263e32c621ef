"""Round 1 of the box search: the noisy public-grid histogram and its weighted k-median."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import skdp.cluster._box_histogram as bh
from skdp.cluster import SubsampledExpMedian
from skdp.cluster._box_histogram import (
    HIST_MAX_CELLS,
    grid_cell_counts,
    histogram_cells_per_axis,
    noisy_grid_histogram,
    weighted_kmedian,
)


def _blobs(n, seed, centres, sd=0.04):
    rng = np.random.default_rng(seed)
    centres = np.asarray(centres, dtype=float)
    return np.clip(centres[rng.integers(len(centres), size=n)] + rng.normal(0, sd, (n, 2)), 0, 1)


# ------------------------------------------------------------------------ the grid
@pytest.mark.parametrize("d", [1, 2, 4, 6, 12, 16])
def test_grid_size_follows_the_phantom_mass_rule(d):
    for n, eps in [(100, 0.03), (5000, 0.3), (20000, 3.0), (10**6, 30.0)]:
        g = histogram_cells_per_axis(d, n, eps)
        assert g >= 2 and g**d <= max(min(HIST_MAX_CELLS, n), 2**d)
        # the largest g with g**d / eps <= 0.1 n (sensitivity 2, so E[max(0, Z)] ~ 1/eps)
        if g > 2:
            assert g**d / eps <= 0.1 * n
        if (g + 1) ** d <= min(HIST_MAX_CELLS, n):
            assert (g + 1) ** d / eps > 0.1 * n
    # never finer for less budget or fewer points
    assert histogram_cells_per_axis(d, 5000, 0.3) <= histogram_cells_per_axis(d, 5000, 3.0)
    assert histogram_cells_per_axis(d, 500, 0.3) <= histogram_cells_per_axis(d, 5000, 0.3)
    assert histogram_cells_per_axis(d, 5000, math.inf) ** d <= max(5000, 2**d)
    # at most about one cell per point
    assert histogram_cells_per_axis(2, 40, math.inf) == 6


def test_grid_has_at_least_k_cells_and_gives_up_beyond_16_features():
    assert histogram_cells_per_axis(2, 10, 0.1, k=10) == 4  # 3 x 3 = 9 cells < 10
    assert histogram_cells_per_axis(16, 10**9, 1.0) == 2
    assert histogram_cells_per_axis(17, 10**9, 1.0) is None
    assert histogram_cells_per_axis(64, 10**9, 1.0) is None
    assert histogram_cells_per_axis(1, 10, 1.0, k=HIST_MAX_CELLS + 1) is None


def test_cell_counts_match_brute_force_and_clip_to_the_edge_cells():
    rng = np.random.default_rng(0)
    lo, hi = np.array([0.0, -1.0, 2.0]), np.array([1.0, 1.0, 2.0])  # a flat third axis
    X = np.column_stack([rng.uniform(-0.2, 1.2, 500), rng.uniform(-1, 1, 500), np.full(500, 2.0)])
    g = 4
    counts = grid_cell_counts(X, lo=lo, hi=hi, cells=g)
    assert counts.dtype == np.int64 and counts.shape == (g**3,) and counts.sum() == 500
    expect = np.zeros((g, g, g), dtype=np.int64)
    for x in X:
        i = min(max(int(np.floor(x[0] * g)), 0), g - 1)
        j = min(max(int(np.floor((x[1] + 1) / 2 * g)), 0), g - 1)
        expect[i, j, 0] += 1
    np.testing.assert_array_equal(counts, expect.ravel())
    with pytest.raises(ValueError):
        grid_cell_counts(np.array([[np.nan, 0.0, 2.0]]), lo=lo, hi=hi, cells=g)


def test_release_is_the_exact_counts_plus_discrete_laplace_of_scale_2_over_eps(monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.random((300, 2))
    lo, hi = np.zeros(2), np.ones(2)
    seen = {}

    def spy(size, *, scale, rng, secure_mode=False):
        seen["scale"], seen["size"], seen["secure"] = scale, size, secure_mode
        return np.zeros(size, dtype=np.int64)

    monkeypatch.setattr(bh, "discrete_laplace_noise", spy)
    P, index, counts = noisy_grid_histogram(X, lo, hi, 5, 0.25, np.random.default_rng(0))
    assert seen["scale"] == pytest.approx(2 / 0.25) and seen["size"] == (25,)
    assert seen["secure"] is False
    np.testing.assert_array_equal(counts, grid_cell_counts(X, lo=lo, hi=hi, cells=5))
    np.testing.assert_allclose(P, lo + (index + 0.5) / 5)
    # no noise at epsilon = inf
    monkeypatch.undo()
    _, _, exact = noisy_grid_histogram(X, lo, hi, 5, math.inf, np.random.default_rng(0))
    np.testing.assert_array_equal(exact, grid_cell_counts(X, lo=lo, hi=hi, cells=5))


def test_noise_law_gives_epsilon_1_dp_for_l1_sensitivity_2():
    """The noise on each count is discrete Laplace with ``P(z) ∝ a^|z|``, ``a =
    exp(-epsilon_1 / 2)`` (checked against the pmf over 90,000 cells of one release): a
    moved point changes two counts by 1, so the pmf ratio of neighbouring releases is at
    most ``a^-2 = e^epsilon_1``."""
    eps = 0.8
    lo, hi = np.zeros(2), np.ones(2)
    X = np.zeros((1, 2))  # one point, in cell 0
    _, _, counts = noisy_grid_histogram(X, lo, hi, 300, eps, np.random.default_rng(3))
    z = counts.astype(np.int64)
    z[0] -= 1
    a = math.exp(-eps / 2)
    for v in range(-6, 7):
        expected = (1 - a) / (1 + a) * a ** abs(v)
        got = np.mean(z == v)
        assert abs(got - expected) < 4 * math.sqrt(expected / z.size) + 1e-4, v
    # the neighbour's worst-case ratio for two counts moved by 1 each
    assert (1 / a) ** 2 == pytest.approx(math.exp(eps))


# ---------------------------------------------------------------- weighted k-median
def test_weighted_kmedian_recovers_separated_weighted_groups():
    centres = np.array([[0.1, 0.1], [0.9, 0.2], [0.5, 0.9]])
    X = _blobs(3000, 0, centres)
    g = 20
    lo, hi = np.zeros(2), np.ones(2)
    P, index, counts = noisy_grid_histogram(X, lo, hi, g, math.inf, None)
    for metric in ("manhattan", "euclidean"):
        C = weighted_kmedian(
            P, index, counts, 3, metric=metric, truncate=2.0, rng=np.random.default_rng(0)
        )
        assert C.shape == (3, 2)
        # one found centre per true centre, within a cell or two
        D = cdist(centres, C)
        assert sorted(D.argmin(axis=1).tolist()) == [0, 1, 2]
        assert D.min(axis=1).max() < 2.5 / g


def test_weighted_kmedian_manhattan_centre_is_the_weighted_axis_median():
    P = np.array([[0.1, 0.1], [0.3, 0.7], [0.5, 0.9]])
    index = np.array([[0, 0], [1, 3], [2, 4]])
    w = np.array([1.0, 5.0, 1.0])
    C = weighted_kmedian(
        P, index, w, 1, metric="manhattan", truncate=10.0, rng=np.random.default_rng(0)
    )
    np.testing.assert_array_equal(C, [[0.3, 0.7]])


def test_weighted_kmedian_with_fewer_positive_cells_than_centres():
    P = np.array([[0.125 + 0.25 * i, 0.5] for i in range(4)])
    index = np.array([[i, 0] for i in range(4)])
    rng = np.random.default_rng(0)
    for w in ([5.0, 0.0, -3.0, 0.0], [0.0, 0.0, 0.0, 0.0], [-1.0, -2.0, -1.0, -4.0]):
        C = weighted_kmedian(P, index, np.array(w), 3, metric="euclidean", truncate=1.0, rng=rng)
        assert C.shape == (3, 2) and np.all(np.isfinite(C))
        assert len({tuple(c) for c in C}) == 3  # k distinct cell centres
    w = np.array([5.0, 0, 0, 0])
    C = weighted_kmedian(P, index, w, 2, metric="manhattan", truncate=1.0, rng=rng)
    assert any(np.allclose(c, P[0]) for c in C)
    # exactly k positive cells: they are the centres (cost 0)
    w = np.array([5.0, 0, 2.0, 0])
    C = weighted_kmedian(P, index, w, 2, metric="euclidean", truncate=1.0, rng=rng)
    np.testing.assert_array_equal(C, P[[0, 2]])


# ------------------------------------------------------------------ in the estimator
def test_box_search_starts_from_the_histogram_and_finds_every_group():
    centres = [[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9], [0.5, 0.5]]
    X = _blobs(5000, 3, centres, sd=0.03)
    est = SubsampledExpMedian(n_clusters=5, epsilon=1.0, bounds=(0, 1), random_state=0).fit(X)
    assert est.first_round_ == "histogram"
    assert est.first_round_cells_ == histogram_cells_per_axis(2, 5000, 0.3, 5)
    D = cdist(np.asarray(centres), est.cluster_centers_)
    assert sorted(D.argmin(axis=1).tolist()) == list(range(5))
    assert D.min(axis=1).max() < 0.05


def test_public_facts_do_not_depend_on_the_rows():
    """Everything about the histogram round that the fitted estimator shows (the grid, the
    schedule, the candidate count, the sensitivities) comes from public numbers: two
    very different tables of the same shape give the same facts."""
    rng = np.random.default_rng(2)
    X = rng.random((800, 3))
    X2 = np.zeros((800, 3))  # every row in one cell
    kw = dict(n_clusters=4, epsilon=2.0, bounds=(0, 1), random_state=0)
    a, b = SubsampledExpMedian(**kw).fit(X), SubsampledExpMedian(**kw).fit(X2)
    for name in ("first_round_cells_", "n_rounds_", "n_candidates_"):
        assert getattr(a, name) == getattr(b, name), name
    np.testing.assert_array_equal(a.round_epsilons_, b.round_epsilons_)
    np.testing.assert_array_equal(a.round_sensitivities_, b.round_sensitivities_)
    assert a.round_sensitivities_[0] == 2.0
    assert a.privacy_breakdown_ == b.privacy_breakdown_
    assert sum(a.privacy_breakdown_.values()) == pytest.approx(2.0)


def test_first_round_option():
    X = np.random.default_rng(0).random((200, 17))
    est = SubsampledExpMedian(n_clusters=2, bounds=(0, 1), random_state=0).fit(X)
    assert est.first_round_ == "grid" and est.first_round_cells_ is None  # 2**17 cells
    with pytest.raises(ValueError, match='first_round="histogram".*17 features'):
        SubsampledExpMedian(n_clusters=2, bounds=(0, 1), first_round="histogram").fit(X)
    with pytest.raises(ValueError, match="first_round"):
        SubsampledExpMedian(n_clusters=2, bounds=(0, 1), first_round="bins").fit(X[:, :2])
    grid = SubsampledExpMedian(n_clusters=2, bounds=(0, 1), first_round="grid", random_state=0)
    assert grid.fit(X[:, :2]).first_round_ == "grid"
    # the candidate-set path has no box search
    V = np.random.default_rng(1).random((10, 2))
    est = SubsampledExpMedian(n_clusters=2, candidates=V, random_state=0).fit(X[:, :2])
    assert est.first_round_ is None and est.first_round_cells_ is None


# ------------------------------------------------------------------ the median step
def _brute_rank_counts(X, centers, windows, metric):
    from skdp.cluster._kmedian_costs import _nearest

    label = _nearest(X, centers, metric)
    out = []
    for j, row in enumerate(windows):
        for a, values in enumerate(row):
            col = X[label == j, a]
            out.append([int((col < v).sum()) for v in values])
            out[-1] = out[-1] + [int((col > v).sum()) for v in values]
    return np.concatenate([np.array(o, dtype=np.int64) for o in out])


def test_median_rank_counts_match_brute_force():
    from skdp.cluster._box_median import median_rank_counts, median_windows

    rng = np.random.default_rng(0)
    X = np.round(rng.random((400, 3)) * 8) / 8  # ties on the grid
    C = rng.random((4, 3))
    lo, hi = np.zeros(3), np.ones(3)
    windows = median_windows(C, lo, hi, np.full(3, 0.2))
    for metric in ("euclidean", "manhattan"):
        got = median_rank_counts(X, centers=C, windows=windows, metric=metric)
        np.testing.assert_array_equal(got, _brute_rank_counts(X, C, windows, metric))
    # every window holds the grid points within 0.2 of the coordinate, from a public grid
    for j in range(4):
        for a in range(3):
            v = windows[j][a]
            assert np.all(np.abs(v - C[j, a]) <= 0.2 + 1e-12)
            np.testing.assert_allclose(v * 256, np.round(v * 256))


def test_median_step_utility_sensitivity_is_one_per_centre_and_axis():
    """Adding a point changes every utility of one centre (per axis) by at most 1 and no
    other centre's; moving one changes at most two centres' (or one centre's by 2): the
    step's ``epsilon_m / (2 d)`` per coordinate then sums to ``epsilon_m``."""
    from skdp.cluster._box_median import median_rank_counts, median_windows

    rng = np.random.default_rng(1)
    lo, hi = np.zeros(2), np.ones(2)
    C = np.array([[0.2, 0.2], [0.8, 0.7], [0.3, 0.9]])
    windows = median_windows(C, lo, hi, np.full(2, 0.3))
    sizes = [len(v) for row in windows for v in row]

    def utilities(X):
        counts = median_rank_counts(X, centers=C, windows=windows, metric="euclidean")
        out, pos = [], 0
        for m in sizes:
            out.append(-np.abs(counts[pos : pos + m] - counts[pos + m : pos + 2 * m]))
            pos += 2 * m
        return out  # one array per (centre, axis)

    for _ in range(50):
        X = rng.random((60, 2))
        base = utilities(X)
        added = utilities(np.vstack([X, rng.random((1, 2))]))
        moved_X = X.copy()
        moved_X[rng.integers(60)] = rng.random(2)
        moved = utilities(moved_X)
        change_add = [np.abs(a - b).max() for a, b in zip(base, added, strict=True)]
        change_move = [np.abs(a - b).max() for a, b in zip(base, moved, strict=True)]
        assert max(change_add) <= 1
        assert sum(c > 0 for c in change_add) <= 2  # one centre, d = 2 axes
        # per axis, the changes summed over centres stay within 2
        for a in range(2):
            assert sum(change_move[j * 2 + a] for j in range(3)) <= 2


def test_median_step_at_infinity_is_the_windowed_lloyd_median():
    from skdp.cluster._box_median import private_median_step

    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(0.2, 0.02, (301, 2)), rng.normal(0.75, 0.02, (301, 2))])
    C = np.array([[0.25, 0.15], [0.7, 0.8]])
    new = private_median_step(
        X, C, np.zeros(2), np.ones(2), np.full(2, 0.25), math.inf, "manhattan", rng
    )
    for j in range(2):
        members = X[j * 301 : (j + 1) * 301]
        np.testing.assert_allclose(new[j], np.median(members, axis=0), atol=1 / 256)


def test_median_step_rule_reads_public_numbers_and_the_estimator_records_it():
    from skdp.cluster._box_median import MEDIAN_SHARE, median_step_applies

    assert median_step_applies(20000, 5, 4, 0.21, 129)
    assert not median_step_applies(6366, 5, 6, 0.21, 129)
    assert not median_step_applies(20000, 5, 4, 0.021, 129)
    assert median_step_applies(10, 5, 4, math.inf, 129)
    X = _blobs(20000, 4, [[0.2, 0.2], [0.8, 0.3], [0.5, 0.8]])
    kw = dict(n_clusters=3, epsilon=1.0, bounds=(0, 1), random_state=0)
    on = SubsampledExpMedian(**kw).fit(X)
    assert on.median_step_
    assert on.round_sensitivities_[1] == 1.0
    assert on.round_epsilons_[1] == pytest.approx(MEDIAN_SHARE * 0.7)
    assert sum(on.privacy_breakdown_.values()) == pytest.approx(1.0)
    off = SubsampledExpMedian(**kw, median_step=False).fit(X)
    assert not off.median_step_ and off.n_rounds_ == on.n_rounds_ - 1
    assert off.round_epsilons_.sum() == pytest.approx(1.0)
    forced = SubsampledExpMedian(**{**kw, "epsilon": 0.01}, median_step=True).fit(X)
    assert forced.median_step_ and forced.round_epsilons_.sum() == pytest.approx(0.01)
    assert not SubsampledExpMedian(**{**kw, "epsilon": 0.01}).fit(X).median_step_
    with pytest.raises(ValueError, match="median_step"):
        SubsampledExpMedian(**kw, median_step="yes").fit(X)
