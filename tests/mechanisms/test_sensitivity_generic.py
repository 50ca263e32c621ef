"""Brute-force tests of the generic sensitivities (enumerate neighbours on a small grid)."""

import itertools

import numpy as np
import pytest

from skdp.mechanisms.sensitivity import (
    bounded_mean_sensitivity,
    bounded_sum_sensitivity,
    count_sensitivity,
    histogram_sensitivity,
    quantile_utility_sensitivity,
)

GRID = (-2.0, -0.5, 0.0, 1.0, 3.0)


def datasets(max_n, grid=GRID):
    for n in range(max_n + 1):
        yield from itertools.product(grid, repeat=n)


def neighbours(D, neighbor, grid=GRID):
    """All neighbours of D under the relation (tuples of values)."""
    D = list(D)
    if neighbor == "add_remove":
        for v in grid:
            yield tuple(D + [v])
        for i in range(len(D)):
            yield tuple(D[:i] + D[i + 1 :])
    else:
        for i in range(len(D)):
            for v in grid:
                yield tuple(D[:i] + [v] + D[i + 1 :])


def max_change(f, neighbor, max_n=3, grid=GRID):
    worst = 0.0
    for D in datasets(max_n, grid):
        fd = f(D)
        for Dp in neighbours(D, neighbor, grid):
            worst = max(worst, float(np.max(np.abs(np.asarray(f(Dp)) - np.asarray(fd)))))
    return worst


@pytest.mark.parametrize("neighbor", ["add_remove", "replace"])
def test_count_sensitivity(neighbor):
    worst = max_change(lambda D: sum(v > 0 for v in D), neighbor)
    assert worst <= count_sensitivity(neighbor=neighbor)
    assert worst == count_sensitivity(neighbor=neighbor)  # tight


@pytest.mark.parametrize("neighbor", ["add_remove", "replace"])
def test_histogram_l1_matches_histogram_sensitivity(neighbor):
    def hist(D):
        return np.array([sum(v < 0 for v in D), sum(v == 0 for v in D), sum(v > 0 for v in D)])

    worst = 0.0
    for D in datasets(3):
        h = hist(D)
        for Dp in neighbours(D, neighbor):
            worst = max(worst, float(np.abs(hist(Dp) - h).sum()))
    assert worst == histogram_sensitivity(replace_one=neighbor == "replace")


@pytest.mark.parametrize("neighbor", ["add_remove", "replace"])
@pytest.mark.parametrize("lo,hi", [(-2.0, 3.0), (-0.5, 1.0), (0.0, 3.0), (-2.0, -0.5)])
def test_bounded_sum_sensitivity(neighbor, lo, hi):
    worst = max_change(lambda D: float(np.clip(D, lo, hi).sum()) if D else 0.0, neighbor)
    assert worst <= bounded_sum_sensitivity(lo, hi, neighbor=neighbor) + 1e-12
    assert worst == pytest.approx(bounded_sum_sensitivity(lo, hi, neighbor=neighbor))


@pytest.mark.parametrize("neighbor", ["add_remove", "replace"])
def test_bounded_mean_sensitivity_public_n(neighbor):
    n_pub = 4
    lo, hi = -0.5, 3.0
    worst = max_change(lambda D: float(np.clip(D, lo, hi).sum()) / n_pub if D else 0.0, neighbor)
    assert worst == pytest.approx(bounded_mean_sensitivity(lo, hi, n_pub, neighbor=neighbor))


def test_bounded_sum_vector_and_errors():
    out = bounded_sum_sensitivity([-1.0, 0.0], [2.0, 5.0])
    np.testing.assert_array_equal(out, [2.0, 5.0])
    np.testing.assert_array_equal(
        bounded_sum_sensitivity(-1.0, [2.0, 5.0], neighbor="replace"), [3, 6]
    )
    with pytest.raises(ValueError):
        bounded_sum_sensitivity(1.0, 0.0)
    with pytest.raises(ValueError, match="neighbor"):
        bounded_sum_sensitivity(0.0, 1.0, neighbor="swap")
    with pytest.raises(ValueError):
        bounded_mean_sensitivity(0.0, 1.0, 0)


@pytest.mark.parametrize("neighbor", ["add_remove", "replace"])
@pytest.mark.parametrize("q", [0.0, 0.1, 0.5, 0.75, 1.0])
def test_quantile_utility_sensitivity(neighbor, q):
    outputs = np.array([-3.0, -1.0, -0.25, 0.5, 2.0, 4.0])  # never equal to a data value

    def util(D):
        D = np.asarray(D, dtype=float)
        rank = (D[:, None] < outputs[None, :]).sum(axis=0) if D.size else np.zeros(len(outputs))
        return -np.abs(rank - q * D.size)

    worst = max_change(util, neighbor, max_n=4)
    assert worst <= quantile_utility_sensitivity(neighbor=neighbor) + 1e-12
    if neighbor == "add_remove":
        assert worst >= max(q, 1 - q) - 1e-12  # the max(q, 1 - q) bound is attained
    else:
        assert worst == pytest.approx(1.0)
