"""Binning and the noisy, filtered cells of :class:`DPHistogramSynthesizer` (Vinterbo 2012)."""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from numbers import Integral

import numpy as np

from skdp.mechanisms import laplace_noise
from skdp.mechanisms._discrete import (
    random_source,
    sample_discrete_laplace,
    sample_geometric,
    uniform_subset,
)
from skdp.synthesis._missing import with_missing_level
from skdp.utils._rowsum import SparseCounts, is_dask_collection, row_sum
from skdp.utils._tabular.binning import ColumnBinner

#: a flat cell index must fit in int64
_MAX_DOMAIN = 2**62
#: the most bins of one column (= the n_bins parameter's upper limit)
_MAX_BINS_PER_COLUMN = 2**24
#: lattice of mechanism="laplace" under secure_mode: exact multiples of 2^-10
_SECURE_LAPLACE_GRID = Fraction(1, 2**10)
#: one-bin-per-integer rule: a histogram's expected noise-only mass (the total that noise
#: alone lifts over the threshold on empty cells) may grow to this share of the public n
#: (see DPHistogramSynthesizer, Notes, "Bins"); Lei's grid itself is always allowed
_NOISE_MASS_FRACTION = 0.1


def lei_n_bins(n_samples, n_dims):
    """Number of equal-width bins per numeric attribute from Lei's (2011) heuristic.

    ``k = ceil(1 / h)`` with ``h = (log(n) / n) ** (1 / (d + 1))`` (natural log), the
    rule Vinterbo's projected histograms use (Lei 2011; Vinterbo 2012). It
    depends only on the public ``n`` and the dimension ``d``.

    Examples
    --------
    >>> from skdp.synthesis import lei_n_bins
    >>> lei_n_bins(2644, 8), lei_n_bins(2644, 7)
    (2, 3)
    """
    n, d = int(n_samples), int(n_dims)
    if n <= 1:
        return 1
    h = (math.log(n) / n) ** (1.0 / (d + 1))
    return max(1, math.ceil(1.0 / h))


def _n_integers(spec):
    """Number of integers inside the declared bounds of an integer column."""
    lo, hi = spec.bounds
    return math.floor(hi) - math.ceil(lo) + 1


def _sample_absent(rng, n_cells, occupied, k):
    """``k`` distinct cells drawn uniformly from ``[0, n_cells)`` minus ``occupied``.

    ``k + len(occupied)`` distinct cells are drawn without replacement in uniformly
    random order; dropping the occupied ones and keeping the first ``k`` gives a
    uniformly random ``k``-subset of the empty cells.
    """
    occupied = np.sort(np.asarray(occupied, dtype=np.int64))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    size = min(k + len(occupied), n_cells)
    draw = np.asarray(rng.choice(n_cells, size=size, replace=False, shuffle=True), dtype=np.int64)
    if len(occupied):
        pos = np.minimum(np.searchsorted(occupied, draw), len(occupied) - 1)
        draw = draw[occupied[pos] != draw]
    return draw[:k]


def column_bins(schema, groups, uniform, n_pub, noise_mass, *, n_bins, max_integer_levels):
    """Bins per column: Lei's rule, then one bin per integer where it is cheap.

    Only public quantities decide: the schema, ``n_pub``, the projections and the
    parameters (see the class Notes, "Bins").
    """
    d_of = {c: len(g) for g in groups for c in g}
    d_of.update({c: schema.n_columns for c in uniform})
    if isinstance(n_bins, dict):
        unknown = [c for c in n_bins if c not in set(schema.names)]
        if unknown:
            raise ValueError(f"n_bins names unknown column(s) {unknown}")
    levels, small = {}, {}  # levels per column; integer columns that may go per value
    for spec in schema:
        # (capped like n_bins: an absurd n_public, 1e30, asked for 2e9 edges per column)
        lei = min(lei_n_bins(n_pub, d_of[spec.name]), _MAX_BINS_PER_COLUMN)
        auto = n_bins == "auto" or (isinstance(n_bins, dict) and spec.name not in n_bins)
        if auto:
            k = lei
        elif isinstance(n_bins, dict):
            k = n_bins[spec.name]
            if (
                isinstance(k, bool)
                or not isinstance(k, Integral)
                or not 1 <= k <= _MAX_BINS_PER_COLUMN
            ):
                raise ValueError(
                    f"n_bins for column {spec.name!r} must be an int in [1, {_MAX_BINS_PER_COLUMN}]"
                )
        else:
            k = n_bins
        k = int(k)
        if spec.kind == "integer":
            m = _n_integers(spec)
            if m < 1:
                raise ValueError(f"integer column {spec.name!r} has no integer inside its bounds")
            levels[spec.name] = min(k, m)
            if auto and k < m <= max(k, int(max_integer_levels)):
                small[spec.name] = m
        elif spec.is_numeric:
            levels[spec.name] = k
        else:
            levels[spec.name] = len(spec.categories)
    # columns drawn uniformly cost no cells: one bin per value when the domain is small
    for c in uniform:
        if c in small:
            levels[c] = small[c]
    # a histogram's columns: smallest domains first, while the cells stay in budget (a
    # declared missing level is one more level of its column: MissingLevel)
    position = {c: j for j, c in enumerate(schema.names)}
    extra = {spec.name: int(spec.missing) for spec in schema}
    for g in groups:
        cells = math.prod(levels[c] + extra[c] for c in g)
        budget = max(noise_mass(cells), _NOISE_MASS_FRACTION * n_pub)
        for c in sorted((c for c in g if c in small), key=lambda c: (small[c], position[c])):
            expanded = cells // (levels[c] + extra[c]) * (small[c] + extra[c])
            if expanded < _MAX_DOMAIN and noise_mass(expanded) <= budget:
                cells, levels[c] = expanded, small[c]
    return {
        spec.name: with_missing_level(ColumnBinner(spec, levels[spec.name]), spec)
        for spec in schema
    }


def noisy_cells(flat, n_cells, plan, rng, *, max_cells, max_survivors, counts=None):
    """Noisy filtered histogram: (sorted surviving cells, their values, sparse?).

    ``flat`` holds the cell index of every row; alternatively ``flat=None`` and
    ``counts`` the exact counts of the occupied cells (a
    :class:`skdp.utils._rowsum.SparseCounts`, summed over Dask partitions). Both give the
    same release for the same rows. ``plan`` (a
    :class:`~skdp.synthesis._histogram_plan.HistogramPlan`) holds the noise and the
    threshold ``tau``, all public.

    Exact path (``mechanism="geometric"``, or any ``mechanism`` with ``secure_mode``):
    a cell's value is ``grid * L`` with the integer ``L = count / grid + Z``, ``Z``
    exact discrete Laplace noise of inverse scale ``alpha = eps' grid / sens`` per
    lattice step (``grid = 1`` for ``"geometric"``, ``2**-10`` for ``"laplace"``;
    ``eps' <= eps`` is ``eps`` rounded down to 20 significant bits); the cell
    survives when ``L >= m = floor(tau / grid) + 1``. Floating-point path
    (``mechanism="laplace"`` without ``secure_mode``): ``count + rng.laplace``.

    Sparse path (more than ``max_cells`` cells): the occupied cells are noised
    explicitly; the surviving *empty* cells are drawn over **all** ``n_cells`` cells
    from public quantities only -- ``k ~ Binomial(n_cells, p)`` candidate cells
    (``p = P(noise alone survives)``), a uniform ``k``-subset, tail values
    ``m + Geometric`` (exact; memoryless tail) or ``tau + Exp`` (float path) -- and
    candidates that fall on occupied cells are dropped. Each cell is then a
    candidate independently with probability ``p``, exactly as if every empty cell
    had been noised.
    """
    eps, tau = plan.eps_group, plan.threshold

    def occupied_counts():
        if counts is None:
            return np.unique(flat, return_counts=True)
        return counts.cells, counts.counts

    def dense_counts():
        if counts is None:
            return np.bincount(flat, minlength=n_cells)
        out = np.zeros(n_cells, dtype=np.int64)
        out[counts.cells] = counts.counts
        return out

    if not math.isfinite(eps):
        cells, cnt = occupied_counts()
        return cells.astype(np.int64), cnt.astype(float), False
    source = random_source(rng, secure_mode=plan.secure_mode)
    if plan.exact:
        grid = plan.grid
        s, t = plan.alpha.numerator, plan.alpha.denominator
        steps = int(1 / grid)  # lattice steps per count
        m_min = math.floor(Fraction(tau) / grid) + 1
        # P(Z >= m) = r^m / (1 + r), r = exp(-s/t): only the binomial's parameter
        p_survive = math.exp(-m_min * s / t) / (1.0 + math.exp(-s / t))

        def noise(n):
            return sample_discrete_laplace(source, n, s, t)

        def tail(k):
            return m_min + sample_geometric(source, k, s, t)

        def survives(v):
            return v >= m_min

        def values(v):
            return np.asarray(v, dtype=float) * float(grid)  # exact: grid is 2^-j

        def base(counts):
            return np.asarray(counts, dtype=np.int64) * steps
    else:  # floating-point Laplace (documented as unsafe against Mironov's attack)
        scale = plan.noise_scale  # sensitivity / eps
        p_survive = 0.5 * math.exp(-tau / scale)

        def noise(n):
            return laplace_noise(n, scale=scale, rng=rng)

        def tail(k):
            return tau + source.exponential(scale, k)

        def survives(v):
            return v > tau

        def values(v):
            return np.asarray(v, dtype=float)

        def base(counts):
            return np.asarray(counts, dtype=float)

    if n_cells <= max_cells:
        h = base(dense_counts()) + noise(n_cells)
        keep = np.flatnonzero(survives(h))
        return keep.astype(np.int64), values(h[keep]), False
    # sparse: decided and drawn from public quantities (n_cells, eps, tau) only
    expected = n_cells * p_survive
    if expected > max_survivors:
        raise ValueError(
            f"the histogram has {n_cells} cells and noise alone would lift about "
            f"{expected:.3g} of them over the threshold (computed from the number of "
            "cells, epsilon and the threshold only); use fewer bins (n_bins), smaller "
            "projections, a larger threshold, or raise max_survivors"
        )
    occupied, cnt = occupied_counts()
    noisy = base(cnt) + noise(len(occupied))
    keep = survives(noisy)
    k = source.binomial(n_cells, p_survive)
    candidates = uniform_subset(source, n_cells, k)
    cand_values = tail(k)
    free = ~np.isin(candidates, occupied, assume_unique=True)
    cells = np.concatenate([occupied[keep].astype(np.int64), candidates[free]])
    vals = np.concatenate([values(noisy[keep]), values(cand_values[free])])
    order = np.argsort(cells, kind="stable")
    return cells[order].astype(np.int64), vals[order], True


def projection_groups(schema, projections):
    """(histogram groups, uniformly drawn columns) from ``projections`` (public)."""
    names = schema.names
    if projections is None:
        return [list(names)], []
    groups, seen = [], set()
    for g in projections:
        g = list(g) if isinstance(g, list | tuple) else [g]
        if not g:
            raise ValueError("projections must not contain an empty group")
        unknown = [c for c in g if c not in set(names)]
        if unknown:
            raise ValueError(f"projections name unknown column(s) {unknown}")
        if seen & set(g) or len(set(g)) != len(g):
            raise ValueError("projections must be disjoint groups of columns")
        seen |= set(g)
        groups.append(g)
    if not groups:
        raise ValueError("projections must contain at least one group")
    return groups, [c for c in names if c not in seen]


def noise_mass(n_cells, eps, tau, *, mechanism, secure_mode):
    """Expected total that noise alone puts on ``n_cells`` empty cells after filtering.

    ``n_cells * P(noise > tau) * E[noise | noise > tau]``, from public quantities
    only (the number of cells, ``epsilon_g`` and ``tau``); 0 without noise.
    """
    if not math.isfinite(eps):
        return 0.0
    if mechanism == "geometric" or secure_mode:
        # noise on the lattice grid * Z: P(L >= m) = r^m / (1 + r), E[L - m | L >= m]
        # = r / (1 - r) with r = exp(-eps grid)
        grid = 1.0 if mechanism == "geometric" else float(_SECURE_LAPLACE_GRID)
        m = math.floor(tau / grid) + 1
        r = math.exp(-eps * grid)
        p = math.exp(-eps * grid * m) / (1.0 + r)
        return n_cells * p * grid * (m + r / -math.expm1(-eps * grid))
    return n_cells * 0.5 * math.exp(-eps * tau) * (tau + 1.0 / eps)


def _shapes(binners, groups):
    shapes = [tuple(binners[c].n_levels for c in g) for g in groups]
    for g, shape in zip(groups, shapes, strict=True):
        n_cells = math.prod(shape)
        if n_cells >= _MAX_DOMAIN:
            raise ValueError(
                f"the histogram over columns {g} has {n_cells} cells, too many to index; "
                "use fewer bins (n_bins) or smaller projections"
            )
    return shapes


def cell_counts(X, encoder, binners, groups, *, codes=None):
    """``(shapes, flats, totals)``: the shape of each histogram's grid and, per
    histogram, the flat cell index of every row (in memory) or the exact sparse counts
    summed over the partitions (Dask input: only the totals come back to the client);
    the other of the two is ``None``. Public binning only. ``codes``: a Dask array of
    the rows' encoder codes (a patient-level fit's kept rows) to count instead of
    ``X``."""
    shapes = _shapes(binners, groups)
    if codes is not None:  # the kept rows' codes, on the workers
        count = functools.partial(
            _code_indices, names=encoder.schema.names, binners=binners, groups=groups, shapes=shapes
        )
        return shapes, [None] * len(groups), row_sum(_row_counts(count), codes)
    count = functools.partial(
        _cell_indices, encoder=encoder, binners=binners, groups=groups, shapes=shapes
    )
    if is_dask_collection(X):  # exact sparse counts per partition; only the totals come back
        return shapes, [None] * len(groups), row_sum(_row_counts(count), X)
    return shapes, count(X), [None] * len(groups)


def _cell_indices(X, *, encoder, binners, groups, shapes):
    """The flat cell index of every row of ``X``, per histogram (public binning only)."""
    C = encoder.codes(X)  # clipped numerics and level codes; raises on bad input
    return _code_indices(
        C, names=encoder.schema.names, binners=binners, groups=groups, shapes=shapes
    )


def _code_indices(C, *, names, binners, groups, shapes):
    """The flat cell index of every row of encoder codes ``C``, per histogram."""
    idx = {c: binners[c].index(C[:, j]) for j, c in enumerate(names)}
    return [
        np.ravel_multi_index(tuple(idx[c] for c in g), shape)
        for g, shape in zip(groups, shapes, strict=True)
    ]


def _sparse_counts(X, *, count):
    """Exact counts of the occupied cells of one block of rows, per histogram."""
    return [SparseCounts.from_cells(flat) for flat in count(X)]


def _row_counts(count):
    """The picklable row function of :func:`skdp.utils._rowsum.row_sum` for ``count``."""
    return functools.partial(_sparse_counts, count=count)
