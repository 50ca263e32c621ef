"""Data-independent bins of one table column: :class:`ColumnBinner`.

The one binner of the binned estimators: the cells of
:class:`~skdp.synthesis.DPHistogramSynthesizer` and
:class:`~skdp.synthesis.DPMarginalSynthesizer` and the bin-and-position encoding of
:class:`~skdp.synthesis.DPGANSynthesizer`. Like scikit-learn's ``KBinsDiscretizer`` it is
one class whose options select the rule; unlike it, nothing is fitted: the edges are a
function of the column's public schema entry (kind, declared bounds, declared levels) and
of the number of bins only, so binning costs no privacy and neighbouring data sets get the
same grid. How many bins a column gets is the estimator's public rule (Lei's heuristic,
the marginal noise scale, ``n * epsilon``), not the binner's.

Rules
-----
* ``"continuous"`` columns: ``n_bins`` equal-width bins over the declared ``[lo, hi]``; a
  value ``v`` falls in ``floor((v - lo) / (hi - lo) * n_bins)``, clipped to the bins.
* ``"integer"`` columns, two rules (``integer=``):

  - ``"groups"`` (the histogram and marginal synthesizers): ``n_bins`` contiguous groups
    of near-equal size of the integers in ``[ceil(lo), floor(hi)]``, computed exactly in
    int64 (:func:`integer_group_starts`); a value is rounded to the nearest integer
    (half to even), clipped, and falls in the group that holds it. Bins are sets of
    integers: a drawn value is an integer of the group.
  - ``"width"`` (the GAN's encoding): ``n_bins`` equal-width bins over
    ``[ceil(lo) - 1/2, floor(hi) + 1/2]`` (the union of the integers' unit cells),
    located on the float scale like a continuous column (``2.5`` falls with ``3``), with a
    position inside the bin; the decoder rounds.

  The two agree on which integers share a bin in some layouts and not in others (10
  integers in 4 bins: the same groups; 5 integers in 3 bins: ``{0}, {1, 2}, {3, 4}``
  against ``{0, 1}, {2}, {3, 4}``), so each estimator keeps its own rule.

  Either rule gives **one bin per integer** when the column holds at most
  ``max(n_bins, small_domain)`` integers (``per_value``): ``small_domain=0`` (the
  default; the histogram and the GAN) only when the integers fit in ``n_bins`` bins, the
  marginal synthesizer's ``small_domain=32`` also above ``n_bins`` (under ``"groups"``
  with at most ``n_bins`` integers every group holds one integer anyway). Under
  ``"width"`` the count ``floor(hi) + 1/2 - (ceil(lo) - 1/2)`` is taken in floating
  point, as the encoding does.
* ``"categorical"`` and ``"binary"`` columns: one level per declared level; the codes of
  :meth:`TabularEncoder.codes <skdp.utils.schema.TabularEncoder.codes>` are the bins.

A declared missing level is not the binner's: the synthesizers wrap it
(``skdp.synthesis._missing.MissingLevel``) and the GAN's encoder adds one coordinate.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_INTEGER_BOUND", "ColumnBinner", "integer_group_starts"]

#: integer columns are binned exactly in int64: their bounds must lie within +-2**62
MAX_INTEGER_BOUND = 2**62

INTEGER_RULES = ("groups", "width")


def integer_group_starts(name, lo, hi, k):
    """Starts of ``k`` contiguous groups of near-equal size over the integers in
    ``[lo, hi]``, and the end: ``k' + 1`` int64 values, ``k' = min(k, #integers)``.

    Group ``i`` is ``starts[i] .. starts[i + 1] - 1``. Computed exactly in int64
    (``(i m) // k`` split as ``i q + (i r) // k``, so nothing overflows). Bounds beyond
    ``+-MAX_INTEGER_BOUND`` raise ``ValueError`` naming the column (they wrapped around
    in int64: ``OverflowError`` or negative group sizes).

    Examples
    --------
    >>> from skdp.utils._tabular.binning import integer_group_starts
    >>> integer_group_starts("age", 0, 9, 4).tolist()
    [0, 2, 5, 7, 10]
    """
    first, last = math.ceil(lo), math.floor(hi)
    m = last - first + 1
    if m < 1:
        raise ValueError(f"integer column {name!r} has no integer inside its bounds")
    if max(abs(first), abs(last) + 1) > MAX_INTEGER_BOUND:
        raise ValueError(
            f"integer column {name!r}: bounds beyond +-2**62 cannot be binned exactly in "
            "int64; rescale the column or declare it 'continuous'"
        )
    k = min(int(k), m)
    # (i m) // k = i q + (i r) // k with m = q k + r: every term fits int64 (i r < k^2)
    q, r = divmod(m, k)
    i = np.arange(k + 1, dtype=np.int64)
    return first + i * q + (i * r) // k


class ColumnBinner:
    """Data-independent bins of one column, from its public schema entry.

    Parameters
    ----------
    spec : ColumnSpec
        The column; a numeric one must have its bounds.
    n_bins : int
        Bins of a numeric column (at least 1); fewer for an integer column with fewer
        integers, more with ``small_domain`` (see the module docstring). Ignored for
        levels.
    integer : {"groups", "width"}, default="groups"
        The rule of an integer column (module docstring, "Rules").
    small_domain : int, default=0
        An integer column with at most ``max(n_bins, small_domain)`` integers gets one bin
        per integer.

    Attributes
    ----------
    kind : str
        The column's kind.
    numeric : bool
        Whether the column is numeric (continuous or integer).
    n_levels : int
        Number of bins (numeric) or declared levels.
    edges : ndarray of shape (n_levels + 1,)
        Numeric columns: the bin edges (``"groups"``: the group starts and the end, as
        floats).
    lo, hi : float
        Numeric columns: the binned range (``"width"`` integers: the half-integers
        around the declared integers).
    starts : ndarray of int64
        ``"groups"`` integer columns: the exact group starts and the end.
    per_value : bool
        Whether every bin holds exactly one integer (integer columns).

    Examples
    --------
    >>> from skdp.utils._tabular.binning import ColumnBinner
    >>> from skdp.utils.schema import ColumnSpec
    >>> spec = ColumnSpec("grade", "integer", bounds=(0, 4))
    >>> ColumnBinner(spec, 3).starts.tolist()
    [0, 1, 3, 5]
    >>> ColumnBinner(spec, 3, small_domain=8).n_levels
    5
    >>> ColumnBinner(spec, 3, integer="width").edges.tolist()
    [-0.5, 1.1666666666666667, 2.8333333333333335, 4.5]
    """

    def __init__(self, spec, n_bins, *, integer="groups", small_domain=0):
        if integer not in INTEGER_RULES:
            raise ValueError(f"integer must be one of {INTEGER_RULES}, got {integer!r}")
        k = int(n_bins)
        if k < 1:
            raise ValueError("n_bins must be a positive integer")
        self.kind = spec.kind
        self.numeric = spec.is_numeric
        self.integer = integer
        self.per_value = False
        if not self.numeric:
            self.n_levels = len(spec.categories)
            return
        lo, hi = spec.bounds
        limit = max(k, int(small_domain))
        if spec.kind == "integer" and integer == "groups":
            m = math.floor(hi) - math.ceil(lo) + 1
            if 1 <= m <= limit:
                k = m  # one bin per value
            # exact groups (bounds beyond int64 and columns without an integer raise)
            self.starts = integer_group_starts(spec.name, lo, hi, k)
            self.n_levels = self.starts.size - 1
            self.per_value = bool(self.starts[-1] - self.starts[0] == self.n_levels)
            self.edges = self.starts.astype(float)
            self.lo, self.hi = lo, hi
            return
        if spec.kind == "integer":  # "width": the integers' unit cells, in floating point
            lo, hi = math.ceil(lo) - 0.5, math.floor(hi) + 0.5
            if hi - lo <= limit:
                k, self.per_value = int(round(hi - lo)), True
            k = max(k, 1)
        self.lo, self.hi = lo, hi
        self.n_levels = k
        self.edges = lo + (hi - lo) * np.arange(k + 1) / k
        self.edges[-1] = hi

    @property
    def _groups(self):
        return self.kind == "integer" and self.integer == "groups"

    def _scaled(self, v):
        """Position of ``v`` on the bin scale: ``(v - lo) / (hi - lo) * n_levels``."""
        return (v - self.lo) / (self.hi - self.lo) * self.n_levels

    def index(self, v):
        """Bin index of numeric values (clipped into the bins), or the level codes.

        Values must not be NaN: a declared missing level is the wrapper's."""
        if not self.numeric:
            return np.asarray(v).astype(np.int64)
        if self._groups:
            v = np.clip(np.rint(v), self.starts[0], self.starts[-1] - 1)
            return np.searchsorted(self.starts, v, side="right").astype(np.int64) - 1
        return self._floor_index(self._scaled(v))

    def locate(self, v):
        """``(index, position)`` of numeric values on a float-scale column (continuous,
        or ``"width"`` integers): the bin and the place inside it in ``[0, 1]``."""
        if self._groups or not self.numeric:
            raise ValueError("locate needs a continuous or a 'width' integer column")
        u = self._scaled(v)
        idx = self._floor_index(u)
        return idx, np.clip(u - idx, 0.0, 1.0)

    def _floor_index(self, u):
        # clipped before the cast to int64, so that a value far outside the bounds (a
        # scaled position beyond +-2**63) still falls in an end bin
        return np.clip(np.floor(u), 0, self.n_levels - 1).astype(np.int64)

    def at_position(self, idx, position):
        """The value at ``position`` (in ``[0, 1]``) inside the bins ``idx``: the inverse
        of :meth:`locate` (float scale; an integer column is rounded by its decoder)."""
        return self.lo + (idx + position) * (self.hi - self.lo) / self.n_levels

    def values(self, idx, rng=None, representative="uniform"):
        """Values of bins ``idx`` (post-processing), or the level codes as floats.

        ``representative="uniform"`` draws uniformly within each bin with ``rng`` (a
        ``"groups"`` integer bin: one of its integers); ``"midpoint"`` takes its centre
        (a ``"groups"`` integer bin: its middle integer, rounded down).
        """
        if not self.numeric:
            return np.asarray(idx).astype(float)
        if self._groups:
            start, stop = self.starts[idx], self.starts[idx + 1]
            if representative == "midpoint":
                return (start + (stop - start - 1) // 2).astype(float)
            return rng.integers(start, stop).astype(float)
        left, right = self.edges[idx], self.edges[idx + 1]
        if representative == "midpoint":
            return (left + right) / 2.0
        return left + (right - left) * rng.random(len(idx))

    def log_width(self, idx):
        """log of the bins' widths (Lebesgue measure, or the number of integers of a
        ``"groups"`` bin); 0 for levels."""
        if not self.numeric:
            return np.zeros(len(idx))
        if self._groups:
            return np.log((self.starts[idx + 1] - self.starts[idx]).astype(float))
        return np.log(self.edges[idx + 1] - self.edges[idx])

    def log_cell_density(self, idx):
        """log of the density of the uniform law within the bins: ``-log_width``; 0 for
        levels."""
        if not self.numeric:
            return np.zeros(len(idx))
        return -self.log_width(idx)
