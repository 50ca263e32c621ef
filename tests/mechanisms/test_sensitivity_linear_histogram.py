"""Brute-force checks of the functional-mechanism and histogram sensitivities."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.mechanisms.sensitivity import (
    functional_mechanism_sensitivity,
    histogram_sensitivity,
)


def _coefficients(X, y, fit_intercept):
    """[vec(X~^T X~), -2 X~^T y] computed independently of the library."""
    X = np.asarray(X, dtype=float).reshape(len(y), -1)
    if fit_intercept:
        X = np.hstack([X, np.ones((len(y), 1))])
    return np.concatenate([(X.T @ X).ravel(), -2 * X.T @ np.asarray(y, dtype=float)])


@pytest.mark.parametrize("p", [0, 1, 2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_functional_mechanism_add_remove_is_the_max_over_a_grid_and_tight(p, fit_intercept):
    if p == 0 and not fit_intercept:
        pytest.skip("no coefficients")
    grid = np.linspace(-1, 1, 5)
    delta = functional_mechanism_sensitivity(p, fit_intercept=fit_intercept)
    d = p + fit_intercept
    assert delta == d * d + 2 * d
    worst = 0.0
    # adding one row to any dataset moves the coefficients by that row's own coefficients
    for row in itertools.product(grid, repeat=p + 1):
        x, yv = np.array(row[:p]), row[p]
        change = np.abs(_coefficients(x[None, :], [yv], fit_intercept)).sum()
        worst = max(worst, change)
    assert worst <= delta + 1e-12
    assert worst == pytest.approx(delta)  # attained at a corner of the box


def test_functional_mechanism_replace_one():
    # S7: replace-one worst case over a grid is <= 2 * (d'^2 + 2d'); Matlab's constant
    assert functional_mechanism_sensitivity(2, replace_one=True) == 2 * 3 * 3 + 4 * 3
    assert functional_mechanism_sensitivity(15) == 16 * 16 + 2 * 16
    grid = np.linspace(-1, 1, 3)
    rows = list(itertools.product(grid, repeat=3))
    worst = 0.0
    for a in rows:
        ca = _coefficients(np.array(a[:2])[None, :], [a[2]], True)
        for b in rows:
            cb = _coefficients(np.array(b[:2])[None, :], [b[2]], True)
            worst = max(worst, np.abs(ca - cb).sum())
    assert worst <= functional_mechanism_sensitivity(2, replace_one=True)
    with pytest.raises(ValueError):
        functional_mechanism_sensitivity(-1)


@given(
    st.integers(1, 4),
    st.integers(1, 12),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_functional_mechanism_random_neighbouring_datasets(p, n, fit_intercept, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = rng.uniform(-1, 1, size=n)
    # extreme extra rows (box corners) are the hardest case
    x_new = rng.choice([-1.0, 1.0], size=p) * rng.uniform(0.5, 1, size=p)
    y_new = rng.choice([-1.0, 1.0])
    c = _coefficients(X, y, fit_intercept)
    c_add = _coefficients(np.vstack([X, x_new]), np.append(y, y_new), fit_intercept)
    delta = functional_mechanism_sensitivity(p, fit_intercept=fit_intercept)
    assert np.abs(c_add - c).sum() <= delta + 1e-9
    # replace row 0
    X_rep, y_rep = X.copy(), y.copy()
    X_rep[0], y_rep[0] = x_new, y_new
    c_rep = _coefficients(X_rep, y_rep, fit_intercept)
    assert np.abs(c_rep - c).sum() <= 2 * delta + 1e-9


def _hist(rows, n_cells):
    return np.bincount(np.asarray(rows, dtype=int), minlength=n_cells)


def test_histogram_sensitivity_exhaustive_small_domain():
    assert histogram_sensitivity() == 1.0
    assert histogram_sensitivity(replace_one=True) == 2.0
    n_cells = 3
    worst_add, worst_rep = 0, 0
    for n in range(0, 4):
        for data in itertools.product(range(n_cells), repeat=n):
            h = _hist(data, n_cells)
            for new in range(n_cells):
                worst_add = max(worst_add, np.abs(_hist(data + (new,), n_cells) - h).sum())
                if n:
                    rep = (new,) + data[1:]
                    worst_rep = max(worst_rep, np.abs(_hist(rep, n_cells) - h).sum())
    assert worst_add == histogram_sensitivity()
    assert worst_rep == histogram_sensitivity(replace_one=True)
