"""The public time grid: edges from public inputs only, each row's interval, exposure."""

from __future__ import annotations

import numpy as np
import pytest

from skdp.survival._grid import exposure_matrix, interval_of, time_grid_edges


def test_equal_intervals_and_user_grid():
    np.testing.assert_allclose(time_grid_edges(10, n_intervals=5), [0, 2, 4, 6, 8, 10])
    np.testing.assert_allclose(time_grid_edges(10, [1, 3]), [0, 1, 3, 10])
    np.testing.assert_allclose(time_grid_edges(10, [0, 5, 10]), [0, 5, 10])


@pytest.mark.parametrize(
    "max_time, grid, n, err, match",
    [
        (0, None, 3, ValueError, "max_time must be positive"),
        (np.inf, None, 3, ValueError, "max_time must be positive"),
        ("10", None, 3, TypeError, "max_time"),
        (10, None, None, TypeError, "n_intervals"),
        (10, None, 0, ValueError, "n_intervals"),
        (10, [3, 2], None, ValueError, "time_grid must be strictly increasing"),
        (10, [5, 12], None, ValueError, "time_grid must lie within"),
        (10, [np.nan], None, ValueError, "time_grid must hold finite"),
        (10, [[1, 2]], None, ValueError, "time_grid must be a non-empty 1-d"),
    ],
)
def test_bad_grids_name_the_parameter(max_time, grid, n, err, match):
    with pytest.raises(err, match=match):
        time_grid_edges(max_time, grid, n_intervals=n)


def test_interval_of_censors_at_the_horizon():
    edges = np.array([0.0, 2.0, 4.0])
    idx, ev = interval_of([0.0, 2.0, 2.5, 4.0, 9.0], [1, 1, 0, 1, 1], edges)
    np.testing.assert_array_equal(idx, [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(ev, [True, True, False, True, False])


def test_exposure_sums_to_the_follow_up_within_the_horizon():
    edges = np.array([0.0, 2.0, 4.0])
    t = np.array([0.0, 1.0, 3.0, 7.0])
    exp = exposure_matrix(t, edges)
    np.testing.assert_allclose(exp, [[0, 0], [1, 0], [2, 1], [2, 2]])
    np.testing.assert_allclose(exp.sum(1), np.minimum(t, 4.0))
