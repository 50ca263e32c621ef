"""Brute-force checks of the sufficient-statistics and smallest-eigenvalue sensitivities
(DPLinearRegression's releases), computed independently of the library."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skdp.mechanisms.sensitivity import (
    gram_min_eigenvalue_sensitivity,
    sufficient_statistics_sensitivity,
)


def _row_terms(x, y, fit_intercept, weight):
    """One row's terms in (upper(X~^T X~) without the corner n, weight * X~^T y~)."""
    xt = np.append(x, 1.0) if fit_intercept else np.asarray(x, dtype=float)
    d = xt.size
    outer = np.outer(xt, xt)
    rows, cols = np.triu_indices(d)
    keep = ~((rows == d - 1) & (cols == d - 1)) if fit_intercept else np.ones(rows.size, bool)
    return np.concatenate([outer[rows[keep], cols[keep]], weight * y * xt])


@pytest.mark.parametrize("p", [0, 1, 2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weight", [1.0, 1.7])
def test_statistics_sensitivity_is_the_max_over_a_grid_and_tight(p, fit_intercept, weight):
    """Add/remove moves the statistics by one row's own terms: the largest L1 / L2 norm
    of those terms over a grid of the box equals the formula (attained at a corner)."""
    if p == 0 and not fit_intercept:
        with pytest.raises(ValueError):
            sufficient_statistics_sensitivity(0, fit_intercept=False)
        return
    grid = np.linspace(-1, 1, 5)
    worst = {"l1": 0.0, "l2": 0.0}
    for row in itertools.product(grid, repeat=p + 1):
        t = _row_terms(np.array(row[:p]), row[p], fit_intercept, weight)
        worst["l1"] = max(worst["l1"], np.abs(t).sum())
        worst["l2"] = max(worst["l2"], np.linalg.norm(t))
    for norm in ("l1", "l2"):
        bound = sufficient_statistics_sensitivity(
            p, fit_intercept=fit_intercept, target_weight=weight, norm=norm
        )
        assert worst[norm] <= bound * (1 + 1e-12)
        assert worst[norm] == pytest.approx(bound, rel=1e-12)
    d = p + fit_intercept
    expected = d * (d + 1) / 2 - fit_intercept + weight * d
    assert sufficient_statistics_sensitivity(
        p, fit_intercept=fit_intercept, target_weight=weight
    ) == pytest.approx(expected)


def test_statistics_sensitivity_through_datasets():
    """The change between a data set and the data set plus one row is that row's terms
    (so the bound above is the add/remove sensitivity), on random data sets."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = int(rng.integers(1, 4))
        n = int(rng.integers(0, 6))
        X = rng.choice(np.linspace(-1, 1, 5), size=(n, p))
        y = rng.choice(np.linspace(-1, 1, 5), size=n)
        x_new, y_new = rng.uniform(-1, 1, p), rng.uniform(-1, 1)

        def stats(X_, y_, p=p):
            zero = _row_terms(np.zeros(p), 0.0, True, 1.3) * 0
            return sum((_row_terms(a, b, True, 1.3) for a, b in zip(X_, y_, strict=True)), zero)

        change = stats(np.vstack([X, x_new]), np.append(y, y_new)) - stats(X, y)
        for norm, order in (("l1", 1), ("l2", 2)):
            bound = sufficient_statistics_sensitivity(p, target_weight=1.3, norm=norm)
            assert np.linalg.norm(change, ord=order) <= bound * (1 + 1e-12)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_min_eigenvalue_sensitivity_over_small_grids(fit_intercept):
    """0 <= lambda_min(G + x~ x~^T) - lambda_min(G) <= d' for every data set of up to 4
    rows from a grid and every added row from the grid (p = 1, 2)."""
    for p in (1, 2):
        bound = gram_min_eigenvalue_sensitivity(p, fit_intercept=fit_intercept)
        assert bound == p + fit_intercept
        grid = [np.array(r) for r in itertools.product(np.linspace(-1, 1, 3), repeat=p)]
        aug = [np.append(g, 1.0) if fit_intercept else g for g in grid]
        worst = 0.0
        for n in range(0, 4 if p == 1 else 3):
            for rows in itertools.combinations_with_replacement(range(len(aug)), n):
                G = sum((np.outer(aug[i], aug[i]) for i in rows), np.zeros((len(aug[0]),) * 2))
                lam = np.linalg.eigvalsh(G)[0]
                for a in aug:
                    change = np.linalg.eigvalsh(G + np.outer(a, a))[0] - lam
                    assert -1e-9 <= change <= bound + 1e-9
                    worst = max(worst, change)
        assert worst <= bound + 1e-9


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_min_eigenvalue_sensitivity_is_attained(p):
    """m copies of each x~ = (-e_j, 1) span the complement of (1, ..., 1): lambda_min is
    0, and adding x~ = (1, ..., 1) raises it to d' = p + 1 (for m large)."""
    d = p + 1
    rows = [np.append(-np.eye(p)[j], 1.0) for j in range(p)]
    G = 50 * sum(np.outer(r, r) for r in rows)
    ones = np.ones(d)
    before = np.linalg.eigvalsh(G)[0]
    after = np.linalg.eigvalsh(G + np.outer(ones, ones))[0]
    assert before == pytest.approx(0.0, abs=1e-9)
    assert after - before == pytest.approx(gram_min_eigenvalue_sensitivity(p), rel=1e-9)
    assert np.all(np.abs(ones) <= 1)  # a row of the scaled box


def test_invalid_arguments():
    with pytest.raises(ValueError):
        sufficient_statistics_sensitivity(-1)
    with pytest.raises(ValueError):
        sufficient_statistics_sensitivity(2, target_weight=0.0)
    with pytest.raises(ValueError):
        sufficient_statistics_sensitivity(2, norm="linf")
    with pytest.raises(ValueError):
        gram_min_eigenvalue_sensitivity(0, fit_intercept=False)


def test_target_moments_sensitivity_is_the_max_over_neighbours_and_tight():
    """Brute force over data sets of up to 3 rows on a grid of [-1, 1]: adding or removing
    one row moves (sum y, sum (y^2 - 1/2)) by at most the formula, in L1 and L2, and the
    bound is attained (a row at +-1)."""
    from skdp.mechanisms.sensitivity import target_moments_sensitivity

    grid = np.linspace(-1, 1, 9)

    def stats(rows):
        rows = np.asarray(rows, dtype=float)
        return np.array([rows.sum(), np.sum(rows**2 - 0.5)])

    worst = {"l1": 0.0, "l2": 0.0}
    for k in range(3):
        for base in itertools.product(grid, repeat=k):
            s0 = stats(base)
            for extra in grid:
                diff = stats(base + (extra,)) - s0
                worst["l1"] = max(worst["l1"], float(np.abs(diff).sum()))
                worst["l2"] = max(worst["l2"], float(np.linalg.norm(diff)))
    for norm in ("l1", "l2"):
        bound = target_moments_sensitivity(norm=norm)
        assert worst[norm] <= bound + 1e-12
        assert worst[norm] == pytest.approx(bound, rel=1e-12)
    with pytest.raises(ValueError):
        target_moments_sensitivity(norm="linf")
