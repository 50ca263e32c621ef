"""The one column binner (skdp.utils._tabular.binning.ColumnBinner).

Besides its own contract (edges, integer columns, out-of-range values, constant and
one-value columns), the binner must reproduce bit for bit each of the three rules it
replaced: the histogram synthesizer's ``_Binner``, the marginal synthesizer's
``_Discretizer`` and the GAN encoder's numeric layout. Their code is frozen below, as it
was before the merge, and compared on a grid of columns, bin counts and values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.utils._tabular.binning import (
    MAX_INTEGER_BOUND,
    ColumnBinner,
    integer_group_starts,
)
from skdp.utils.schema import ColumnSpec

# ---------------------------------------------------------------- the old rules (frozen)


class _OldHistogramBinner:
    """skdp.synthesis._histogram_cells._Binner before the merge."""

    def __init__(self, spec, k):
        self.kind = spec.kind
        if spec.is_numeric:
            lo, hi = spec.bounds
            if spec.kind == "integer":
                self.starts = integer_group_starts(spec.name, lo, hi, k)
                k = self.starts.size - 1
                self.edges = self.starts.astype(float)
            else:
                self.edges = lo + (hi - lo) * np.arange(k + 1) / k
                self.edges[-1] = hi
            self.lo, self.hi = lo, hi
            self.n_levels = k
        else:
            self.n_levels = len(spec.categories)

    def index(self, v):
        if self.kind == "continuous":
            k = self.n_levels
            idx = np.floor((v - self.lo) / (self.hi - self.lo) * k).astype(np.int64)
            return np.clip(idx, 0, k - 1)
        if self.kind == "integer":
            v = np.clip(np.rint(v), self.starts[0], self.starts[-1] - 1)
            return np.searchsorted(self.starts, v, side="right").astype(np.int64) - 1
        return np.asarray(v).astype(np.int64)

    def values(self, idx, representative, rng):
        if self.kind == "continuous":
            left, right = self.edges[idx], self.edges[idx + 1]
            if representative == "midpoint":
                return (left + right) / 2.0
            return left + (right - left) * rng.random(len(idx))
        if self.kind == "integer":
            start, stop = self.starts[idx], self.starts[idx + 1]
            if representative == "midpoint":
                return (start + (stop - start - 1) // 2).astype(float)
            return rng.integers(start, stop).astype(float)
        return idx.astype(float)

    def log_cell_density(self, idx):
        if self.kind == "continuous":
            return -np.log(self.edges[idx + 1] - self.edges[idx])
        if self.kind == "integer":
            return -np.log((self.starts[idx + 1] - self.starts[idx]).astype(float))
        return np.zeros(len(idx))


class _OldMarginalDiscretizer:
    """skdp.synthesis._marginal_model._Discretizer before the merge."""

    def __init__(self, spec, k):
        self.kind = spec.kind
        if spec.kind == "continuous":
            lo, hi = spec.bounds
            self.edges = lo + (hi - lo) * np.arange(k + 1) / k
            self.edges[-1] = hi
            self.lo, self.hi = lo, hi
            self.n_levels = k
        elif spec.kind == "integer":
            lo, hi = spec.bounds
            m = math.floor(hi) - math.ceil(lo) + 1
            if 1 <= m <= max(k, 32):
                k = m
            self.starts = integer_group_starts(spec.name, lo, hi, k)
            self.edges = self.starts.astype(float)
            self.n_levels = self.starts.size - 1
        else:
            self.n_levels = len(spec.categories)

    # its index() was the histogram binner's, line for line
    index = _OldHistogramBinner.index

    def values(self, idx, rng):
        if self.kind == "continuous":
            left, right = self.edges[idx], self.edges[idx + 1]
            return left + (right - left) * rng.random(len(idx))
        if self.kind == "integer":
            return rng.integers(self.starts[idx], self.starts[idx + 1]).astype(float)
        return np.asarray(idx, dtype=float)

    def log_width(self, idx):
        if self.kind == "continuous":
            return np.log(self.edges[idx + 1] - self.edges[idx])
        if self.kind == "integer":
            return np.log((self.starts[idx + 1] - self.starts[idx]).astype(float))
        return np.zeros(len(idx))


def _old_gan_layout(c, n_bins):
    """(lo, hi, k, has_pos) of a numeric column in BinnedEncoder before the merge."""
    lo, hi = (float(v) for v in c.bounds)
    k, has_pos = n_bins, True
    if c.kind == "integer":
        lo, hi = math.ceil(lo) - 0.5, math.floor(hi) + 0.5
        if hi - lo <= n_bins:
            k, has_pos = int(round(hi - lo)), False
    return lo, hi, max(k, 1), has_pos


def _old_gan_encode(lo, hi, k, v):
    u = (v - lo) / (hi - lo) * k
    b = np.clip(np.floor(u), 0, k - 1).astype(np.int64)
    return b, np.clip(u - b, 0.0, 1.0)


def _old_gan_decode(lo, hi, k, b, t):
    return lo + (np.minimum(b, k - 1) + t) * (hi - lo) / k


# ---------------------------------------------------------------- the grid

CONTINUOUS = [(0.0, 1.0), (-3.7, 12.1), (15.0, 45.0), (-1e100, 1e100), (1.0, 1.0 + 1e-9)]
INTEGER = [
    (0, 1),
    (0, 4),
    (2.5, 3.5),  # one integer
    (18, 90),
    (-20.5, 19.7),
    (0.3, 9.9),
    (0, 5000),
    (-(10**18), 10**18),
]
N_BINS = [1, 2, 3, 4, 7, 8, 16, 32, 33, 100]


def _values(lo, hi, seed=0):
    """Values in and around ``[lo, hi]``: random, the bounds, halves, out of range."""
    rng = np.random.default_rng(seed)
    span = hi - lo
    v = np.concatenate(
        [
            lo + span * rng.random(200),
            [lo, hi, lo - 0.1 * span, hi + 0.1 * span, lo + span / 2],
            np.floor(lo) + np.arange(-2, 12) * 0.5,  # halves near lo (rint ties)
        ]
    )
    return v


def _spec(kind, bounds, name="c"):
    return ColumnSpec(name, kind, bounds=bounds)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if a.dtype.kind == "f":  # bit for bit: the sign of zero too
        assert np.array_equal(np.signbit(a), np.signbit(b))


def _cases(kinds):
    for kind, grid in (("continuous", CONTINUOUS), ("integer", INTEGER)):
        if kind in kinds:
            for bounds in grid:
                for k in N_BINS:
                    yield _spec(kind, bounds), k


def _bins(binner, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, binner.n_levels, 64)


# ---------------------------------------------------------------- equivalence


@pytest.mark.parametrize("spec, k", list(_cases(("continuous", "integer"))), ids=str)
def test_groups_rule_reproduces_the_histogram_binner(spec, k):
    old, new = _OldHistogramBinner(spec, k), ColumnBinner(spec, k)
    assert new.n_levels == old.n_levels
    _same(new.edges, old.edges)
    v = _values(*spec.bounds)
    _same(new.index(v), old.index(v))
    idx = _bins(new)
    for rep in ("midpoint", "uniform"):
        a = new.values(idx, np.random.default_rng(2), rep)
        _same(a, old.values(idx, rep, np.random.default_rng(2)))
    _same(new.log_cell_density(idx), old.log_cell_density(idx))


@pytest.mark.parametrize("spec, k", list(_cases(("continuous", "integer"))), ids=str)
def test_groups_rule_with_small_domain_reproduces_the_marginal_discretizer(spec, k):
    old, new = _OldMarginalDiscretizer(spec, k), ColumnBinner(spec, k, small_domain=32)
    assert new.n_levels == old.n_levels
    _same(new.edges, old.edges)
    v = _values(*spec.bounds)
    _same(new.index(v), old.index(v))
    idx = _bins(new)
    _same(new.values(idx, np.random.default_rng(3)), old.values(idx, np.random.default_rng(3)))
    _same(new.log_width(idx), old.log_width(idx))


@pytest.mark.parametrize("spec, k", list(_cases(("continuous", "integer"))), ids=str)
def test_width_rule_reproduces_the_gan_encoding(spec, k):
    lo, hi, kk, has_pos = _old_gan_layout(spec, k)
    new = ColumnBinner(spec, k, integer="width")
    assert (new.lo, new.hi, new.n_levels) == (lo, hi, kk)
    assert new.per_value is (not has_pos)
    v = np.clip(_values(*spec.bounds), *spec.bounds)  # the encoder clips first
    b_old, t_old = _old_gan_encode(lo, hi, kk, v)
    b_new, t_new = new.locate(v)
    _same(b_new, b_old)
    _same(t_new, t_old)
    t = np.random.default_rng(4).random(64)
    idx = _bins(new)
    _same(new.at_position(idx, t), _old_gan_decode(lo, hi, kk, idx, t))


def test_levels_match_every_old_rule():
    spec = ColumnSpec("site", "categorical", categories=["a", "b", "c"])
    codes = np.array([0.0, 2.0, 1.0, 2.0])
    for new, old in [
        (ColumnBinner(spec, 5), _OldHistogramBinner(spec, 5)),
        (ColumnBinner(spec, 5, small_domain=32), _OldMarginalDiscretizer(spec, 5)),
    ]:
        assert new.n_levels == old.n_levels == 3
        _same(new.index(codes), old.index(codes))
    idx = np.array([0, 2, 1])
    _same(ColumnBinner(spec, 5).values(idx), _OldHistogramBinner(spec, 5).values(idx, "", None))
    _same(ColumnBinner(spec, 5).log_width(idx), np.zeros(3))
    _same(ColumnBinner(spec, 5).log_cell_density(idx), np.zeros(3))


def test_the_integer_rules_differ_where_each_estimator_keeps_its_own():
    # 5 integers in 3 bins: near-equal groups {0}, {1, 2}, {3, 4}; equal widths over
    # [-0.5, 4.5]: {0, 1}, {2}, {3, 4}
    spec = _spec("integer", (0, 4))
    v = np.arange(5.0)
    assert ColumnBinner(spec, 3).index(v).tolist() == [0, 1, 1, 2, 2]
    assert ColumnBinner(spec, 3, integer="width").index(v).tolist() == [0, 0, 1, 2, 2]
    # 10 integers in 4 bins: the same groups
    spec = _spec("integer", (0, 9))
    v = np.arange(10.0)
    _same(ColumnBinner(spec, 4).index(v), ColumnBinner(spec, 4, integer="width").index(v))
    # a half: rounded half to even into its group, or located on the float scale
    spec = _spec("integer", (0, 9))
    assert ColumnBinner(spec, 10).index(np.array([2.5]))[0] == 2
    assert ColumnBinner(spec, 10, integer="width").index(np.array([2.5]))[0] == 3


# ---------------------------------------------------------------- contract


def test_continuous_edges_are_equal_width_and_end_on_the_bounds():
    b = ColumnBinner(_spec("continuous", (-3.7, 12.1)), 7)
    assert b.n_levels == 7 and b.edges.size == 8
    assert b.edges[0] == -3.7 and b.edges[-1] == 12.1
    np.testing.assert_allclose(np.diff(b.edges), (12.1 + 3.7) / 7)
    # every bin's left edge falls in that bin; the upper bound in the last one
    assert b.index(b.edges[:-1]).tolist() == list(range(7))
    assert b.index(np.array([12.1]))[0] == 6


@pytest.mark.parametrize("integer", ["groups", "width"])
def test_out_of_range_values_fall_in_the_end_bins(integer):
    for spec in (_spec("continuous", (0.0, 1.0)), _spec("integer", (0, 20))):
        b = ColumnBinner(spec, 4, integer=integer)
        idx = b.index(np.array([-1e300, -5.0, 1e6, 1e300]))
        assert idx.tolist() == [0, 0, b.n_levels - 1, b.n_levels - 1]
        assert idx.dtype == np.int64


def test_integer_groups_cover_every_integer_once_in_near_equal_groups():
    b = ColumnBinner(_spec("integer", (-20.5, 19.7)), 7)
    assert int(b.starts[0]) == -20 and int(b.starts[-1]) == 20  # -20 .. 19
    sizes = np.diff(b.starts)
    assert sizes.sum() == 40 and sizes.max() - sizes.min() <= 1
    ints = np.arange(-20, 20, dtype=float)
    idx = b.index(ints)
    assert np.all(np.diff(idx) >= 0) and idx[0] == 0 and idx[-1] == 6
    draws = b.values(np.repeat(np.arange(7), 50), np.random.default_rng(0))
    assert np.all(draws == np.round(draws)) and draws.min() >= -20 and draws.max() <= 19
    assert np.array_equal(b.index(draws), np.repeat(np.arange(7), 50))  # stays in its bin


def test_one_bin_per_integer_up_to_max_of_n_bins_and_small_domain():
    spec = _spec("integer", (0, 9))  # 10 integers
    assert ColumnBinner(spec, 10).per_value and ColumnBinner(spec, 10).n_levels == 10
    assert ColumnBinner(spec, 50).n_levels == 10  # never more bins than integers
    assert not ColumnBinner(spec, 4).per_value and ColumnBinner(spec, 4).n_levels == 4
    assert ColumnBinner(spec, 4, small_domain=10).n_levels == 10
    assert ColumnBinner(spec, 4, small_domain=9).n_levels == 4
    w = ColumnBinner(spec, 10, integer="width")
    assert w.per_value and w.n_levels == 10 and w.edges.tolist() == list(np.arange(11) - 0.5)
    assert ColumnBinner(spec, 4, small_domain=10, integer="width").per_value


def test_a_column_with_one_integer_has_one_bin():
    spec = _spec("integer", (2.5, 3.5))
    for integer in ("groups", "width"):
        b = ColumnBinner(spec, 8, integer=integer)
        assert b.n_levels == 1 and b.per_value
        assert b.index(np.array([-1.0, 3.0, 99.0])).tolist() == [0, 0, 0]
    b = ColumnBinner(spec, 8)
    assert b.values(np.zeros(5, dtype=np.int64), np.random.default_rng(0)).tolist() == [3.0] * 5
    assert ColumnBinner(spec, 8, integer="width").at_position(np.array([0]), 0.5)[0] == 3.0


def test_a_narrow_continuous_column_keeps_finite_positive_widths():
    # a (nearly) constant column: the declared range, however narrow, is binned as is
    b = ColumnBinner(_spec("continuous", (1.0, 1.0 + 1e-9)), 4)
    assert np.all(np.diff(b.edges) > 0)
    assert np.all(np.isfinite(b.log_width(np.arange(4))))
    assert b.index(np.array([1.0, 1.0 + 1e-9, 2.0])).tolist() == [0, 3, 3]


def test_locate_and_at_position_invert_each_other():
    b = ColumnBinner(_spec("continuous", (15.0, 45.0)), 8)
    v = np.random.default_rng(0).uniform(15, 45, 100)
    idx, pos = b.locate(v)
    assert np.all((pos >= 0) & (pos <= 1))
    _same(idx, b.index(v))
    np.testing.assert_allclose(b.at_position(idx, pos), v, rtol=1e-12)
    with pytest.raises(ValueError, match="locate"):
        ColumnBinner(_spec("integer", (0, 9)), 3).locate(v)


def test_midpoints_are_centres_of_the_bins():
    b = ColumnBinner(_spec("continuous", (0.0, 1.0)), 4)
    assert b.values(np.arange(4), None, "midpoint").tolist() == [0.125, 0.375, 0.625, 0.875]
    g = ColumnBinner(_spec("integer", (0, 9)), 4)  # groups 0-1, 2-4, 5-6, 7-9
    assert g.values(np.arange(4), None, "midpoint").tolist() == [0.0, 3.0, 5.0, 8.0]


def test_bad_arguments_are_refused():
    spec = _spec("continuous", (0.0, 1.0))
    with pytest.raises(ValueError, match="n_bins"):
        ColumnBinner(spec, 0)
    with pytest.raises(ValueError, match="integer must be"):
        ColumnBinner(spec, 4, integer="quantile")
    bound = float(MAX_INTEGER_BOUND)
    with pytest.raises(ValueError, match="integer column 'age'"):
        ColumnBinner(_spec("integer", (-bound, bound), name="age"), 8)
