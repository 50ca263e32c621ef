"""Binned encoding of the numeric columns for :class:`~skdp.synthesis.DPGANSynthesizer`.

``numeric_encoding="bins"`` (the default) cuts every numeric column's DECLARED range into
equal-width bins (a public, data-independent layout, like the modes of CTGAN's
mode-specific normalisation (Xu et al. 2019) but without the data-fitted Gaussian mixture)
and encodes a value as a one-hot bin indicator plus its position inside the bin in
``[0, 1]``. The generator emits a softmax over the bins and a sigmoid position, so a
skewed or narrow marginal is a categorical distribution for it to match instead of one
bounded output that has to squeeze into a small part of ``[0, 1]``. An integer column
whose declared domain has at most as many values as there are bins gets one bin per
value and no position.

A column with a declared missing level (``missing="category"``, or ``"missing": true`` in
the schema) gets one more coordinate in its softmax block: after the bins of a numeric
column (its position is then 0.5 and carries nothing), after the levels of a categorical
column; a binary column with a missing level is a softmax block of three (0, 1,
missing). Decoding writes the level back as a missing value.

Everything here is a function of the public schema and of public ``n`` and ``epsilon``
(:func:`default_n_bins`); nothing reads a private value except :meth:`transform`, whose
output only the DP-SGD steps read.
"""

from __future__ import annotations

import math

import numpy as np

from skdp.utils._tabular.binning import ColumnBinner
from skdp.utils._tabular.encoder import TabularEncoder

__all__ = [
    "BinnedEncoder",
    "default_n_bins",
    "draw_rows",
    "n_bins_per_column",
    "softmax_blocks",
    "spread_positions",
]

#: Smallest and largest default number of bins per numeric column.
MIN_BINS, MAX_BINS = 4, 16


def default_n_bins(n, epsilon):
    """Default bins per numeric column from public ``n`` and ``epsilon``.

    ``clip(2 ** round(log2((n * epsilon) ** (1/3))), 4, 16)``: finer bins when more
    records and more budget carry the per-bin frequencies (a cube-root rule in the
    effective sample size ``n * epsilon``, as for histogram bin widths); a power of two,
    so that the layout does not follow any decimal evaluation grid. ``epsilon=inf``:
    16. Non-decreasing in ``n`` and in ``epsilon``.
    """
    n_eff = float(n) * float(epsilon) if math.isfinite(epsilon) else math.inf
    if not math.isfinite(n_eff):
        return MAX_BINS
    k = 2 ** round(math.log2(max(n_eff, 1.0) ** (1.0 / 3.0)))
    return int(min(MAX_BINS, max(MIN_BINS, k)))


class BinnedEncoder:
    """Per-record encoder: numeric columns as (bin one-hot, within-bin position).

    Parameters
    ----------
    schema : TabularSchema
        Complete public schema (declared or privately estimated bounds).
    n_bins : int
        Equal-width bins over each numeric column's declared bounds (integer columns:
        over ``(ceil(lo) - 0.5, floor(hi) + 0.5)``; one bin per value when the domain has
        at most ``n_bins`` values): the ``integer="width"`` rule of
        :class:`~skdp.utils._tabular.binning.ColumnBinner`.

    Attributes
    ----------
    n_encoded_features_ : int
    slices_ : dict {column name: slice}
        The column's whole block (bins and position for a numeric column).
    softmax_blocks_ : list of (int, int)
        ``[start, stop)`` of every block the generator emits as a softmax (categorical
        one-hot blocks and numeric bin blocks).
    discrete_ : ndarray of bool
        Coordinates that hold 0/1 indicators (binary, one-hot and bin coordinates).
    numeric_range : (0.0, 1.0)
    """

    numeric_range = (0.0, 1.0)
    categorical = "onehot"

    def __init__(self, schema, n_bins):
        n_bins = int(n_bins)
        if n_bins < 1:
            raise ValueError("n_bins must be a positive integer")
        self.schema = schema
        self.n_bins = n_bins
        self._base = TabularEncoder(schema, categorical="ordinal", numeric_range=(0.0, 1.0))
        pos = 0
        self.slices_, self._binners = {}, {}
        self.softmax_blocks_ = []
        discrete = []
        for c in schema:
            m = int(c.missing)  # the declared missing level: one more block coordinate
            if c.is_numeric:
                # equal widths; an integer column over its integers' unit cells, one bin
                # per value (and no position) when it has at most n_bins values
                binner = ColumnBinner(c, n_bins, integer="width")
                k, has_pos = binner.n_levels, not binner.per_value
                self._binners[c.name] = binner
                width = k + m + int(has_pos)
                self.softmax_blocks_.append((pos, pos + k + m))
                discrete += [True] * (k + m) + [False] * int(has_pos)
            elif c.kind == "binary" and not m:
                width = 1
                discrete.append(True)
            else:
                width = len(c.categories) + m
                self.softmax_blocks_.append((pos, pos + width))
                discrete += [True] * width
            self.slices_[c.name] = slice(pos, pos + width)
            pos += width
        self.n_encoded_features_ = pos
        self.discrete_ = np.asarray(discrete, dtype=bool)

    def transform(self, X):
        """Encode ``X`` (validated and clipped to the bounds like :class:`TabularEncoder`)."""
        C = self._base.codes(X)
        n = C.shape[0]
        Z = np.zeros((n, self.n_encoded_features_))
        rows = np.arange(n)
        for j, c in enumerate(self.schema):
            sl = self.slices_[c.name]
            if c.is_numeric:
                binner = self._binners[c.name]
                k = binner.n_levels
                absent = np.isnan(C[:, j])  # only where a missing level is declared
                b, position = binner.locate(np.where(absent, binner.lo, C[:, j]))
                Z[rows, sl.start + np.where(absent, k, b)] = 1.0
                if not binner.per_value:  # a position
                    pos_at = sl.start + k + int(c.missing)
                    Z[:, pos_at] = np.where(absent, 0.5, position)
            elif c.kind == "binary" and not c.missing:
                Z[:, sl.start] = C[:, j]
            else:
                Z[rows, sl.start + C[:, j].astype(np.int64)] = 1.0
        return Z

    def decode(self, Z, rng=None):
        """Records from encoded (or generated) rows: post-processing.

        With ``rng``, every bin, level and binary value is drawn from the generator's
        probabilities (softmax / sigmoid output), and the positions inside each drawn
        bin are spread uniformly in the generator's order (:func:`spread_positions`);
        without, the argmax / threshold and the generator's position. The value of a
        numeric column is the drawn bin's left edge plus the position (clipped to
        ``[0, 1]``) times the bin width; integer columns are rounded.
        """
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.n_encoded_features_:
            raise ValueError(
                f"Z must have shape (n_samples, {self.n_encoded_features_}), got {Z.shape}"
            )
        n = Z.shape[0]
        cols = []
        for c in self.schema:
            sl = self.slices_[c.name]
            if c.kind == "binary" and not c.missing:
                p = np.clip(np.nan_to_num(Z[:, sl.start], nan=0.5), 0.0, 1.0)
                cols.append((rng.random(n) < p) if rng is not None else (p > 0.5))
                continue
            if c.is_numeric:
                binner = self._binners[c.name]
                k, m = binner.n_levels, int(c.missing)
                b = draw_rows(Z[:, sl.start : sl.start + k + m], rng)
                if not binner.per_value:
                    t = np.clip(np.nan_to_num(Z[:, sl.start + k + m], nan=0.5), 0.0, 1.0)
                    if rng is not None:
                        t = spread_positions(b, t, rng)
                else:
                    t = np.full(n, 0.5)
                value = binner.at_position(np.minimum(b, k - 1), t)
                cols.append(np.where(b == k, np.nan, value) if m else value)
            else:
                cols.append(draw_rows(Z[:, sl], rng))
        return self._base.assemble(self._base.decode_codes([np.asarray(v, float) for v in cols]))

    def inverse_transform(self, Z):
        """:meth:`decode` without drawing (argmax bins and levels)."""
        return self.decode(Z, None)


def n_bins_per_column(schema, encoder):
    """``n_bins_``: ``{column: bins}`` of every discretised column (``doc/glossary.rst``).

    A numeric column binned by a :class:`BinnedEncoder` has its bins (one per value for
    an integer column with at most ``n_bins`` values); a categorical or binary column
    has its declared levels (its categories count as its bins). A declared missing
    level is one more bin. Numeric columns of the scaled encoding are not discretised
    and have no entry. Public: a function of the schema and ``n_bins`` only.
    """
    binners = encoder._binners if isinstance(encoder, BinnedEncoder) else {}
    out = {}
    for c in schema:
        if c.is_numeric and c.name not in binners:
            continue
        k = binners[c.name].n_levels if c.is_numeric else len(c.categories)
        out[c.name] = int(k) + int(c.missing)
    return out


def spread_positions(bins, t, rng):
    """Rank-preserving map of the positions ``t`` to uniform positions within each bin.

    The rows of one bin keep the generator's order of their positions (ties broken at
    random) but get the stratified uniform positions ``(r + U) / m`` (rank ``r`` of
    ``m`` rows, ``U ~ U(0, 1)``), so every row's position is uniform in its bin:
    a quantile mapping of the generator's position onto the histogram density of the
    drawn bins. A DP-trained generator's sigmoid position tends to sit near one value
    per column (the critic's noisy gradient carries little about it), which piles all
    of a bin's values onto one point. Post-processing of the generator's output.
    """
    n = t.size
    order = np.lexsort((rng.random(n), t, bins))
    sb = np.asarray(bins)[order]
    start = np.searchsorted(sb, sb, side="left")
    count = np.searchsorted(sb, sb, side="right") - start
    out = np.empty(n)
    out[order] = (np.arange(n) - start + rng.random(n)) / count
    return out


def draw_rows(P, rng):
    """One index per row of the generator's (unnormalised) probabilities ``P``: drawn
    with ``rng`` (``Categorical`` of the clipped, normalised row; uniform for a row with
    no mass, NaN counts as 0), the argmax without ``rng``. Post-processing."""
    P = np.clip(np.nan_to_num(np.asarray(P, dtype=float), nan=0.0), 0.0, None)
    if rng is None:
        return np.argmax(P, axis=1)
    tot = P.sum(axis=1, keepdims=True)
    P = np.where(tot > 0, P / np.where(tot > 0, tot, 1.0), 1.0 / P.shape[1])
    u = rng.random((P.shape[0], 1))
    return np.minimum((np.cumsum(P, axis=1) < u).sum(axis=1), P.shape[1] - 1)


def softmax_blocks(encoder):
    """``[start, stop)`` of each block of the encoded row the generator emits as a softmax
    (categorical one-hot blocks; with the binned encoding also the numeric bin blocks)."""
    if isinstance(encoder, BinnedEncoder):
        return list(encoder.softmax_blocks_)
    out = []
    for c in encoder.schema:
        if c.kind == "categorical":
            sl = encoder.slices_[c.name]
            out.append((sl.start, sl.stop))
    return out
