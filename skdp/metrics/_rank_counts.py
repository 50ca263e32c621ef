"""Exact ROC AUC / average precision from per-score class counts, in memory or with Dask.

Both metrics are functions of the table that gives, for every distinct score ``s`` (in
increasing order), the number ``P_s`` of positives and ``N_s`` of negatives scored ``s``.
With the prefix counts ``Pb_s`` / ``Nb_s`` (positives / negatives scored below ``s``):

* ``ties="sklearn"``: ``2 U = sum_s P_s (2 Nb_s + N_s)`` (a tied pair counts 1/2) and
  ``AP = (1/n) sum_j T_j / (T_j + F_j)`` with ``T = n - Pb_s``, ``F = m - Nb_s`` for the
  ``P_s`` positives scored ``s``;
* ``ties="pessimistic"``: ``U = sum_s P_s Nb_s`` and ``AP = (1/n) sum_j j / (j + F_j)``,
  ``j = 1..n`` the positives in decreasing score order (ties in any order: a tie group
  gets the ranks ``n - Pb_s - P_s + 1 .. n - Pb_s`` and one ``F``).

A block of consecutive distinct scores with its offsets ``(Pb, Nb)`` contributes an
integer to ``U`` and an integer to ``AP``: every term ``r`` of the AP sum is a double in
``[1/N, 1]``, so an integer multiple of ``2^-bits`` with ``bits = 32 ceil((53 +
bitlen(N)) / 32)`` (``N`` the public number of rows); the terms are split exactly into
32-bit digits and summed as integers. The totals do not depend on how the scores are cut
into blocks, and the final AP is the exact rational ``sum / n`` rounded once to the
nearest double. The in-memory path is the one-block case of the Dask path, so both give
bit-identical values.

With Dask the table is built by a distributed sort: each partition counts its own
distinct scores; cut points drawn from those tables split the score range into as many
buckets as there are partitions; each bucket merges its slices of every partition's
table; the bucket totals give every bucket its offsets; each bucket returns two Python
integers. The client receives the four totals (and the graph computes the cut points on a
worker): no state of size ``n`` or of the number of distinct scores ever reaches it. A
bucket holds the distinct scores of its score range (at most its rows), on one worker;
there are about ``n / 2^22`` buckets (at least 4, at most one per partition).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from skdp.metrics._checks import _resolve_pos_label
from skdp.utils._rowsum import as_1d_pair, is_dask_collection, row_sum
from skdp.utils.validation import check_finite

_DIGIT_BITS = 32
_BUCKET_ROWS = 1 << 22


def fraction_bits(n_rows):
    """Bits after the binary point that hold every AP term of a data set of ``n_rows``."""
    need = 53 + max(1, int(n_rows).bit_length())
    return _DIGIT_BITS * -(-need // _DIGIT_BITS)


def count_table(pos, scores):
    """``(distinct scores ascending, positives per score, negatives per score)``."""
    scores = np.asarray(scores, dtype=np.float64)
    pos = np.asarray(pos, dtype=bool)
    n = scores.shape[0]
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0), empty, empty
    order = np.argsort(scores)  # the order among equal scores does not matter
    ss = scores[order]
    start = np.flatnonzero(np.concatenate(([True], ss[1:] != ss[:-1])))
    total = np.diff(np.append(start, n))
    p = np.add.reduceat(pos[order].astype(np.int64), start)
    return ss[start], p, total - p


def _exact_sum(values, bits):
    """``sum(values) * 2^bits`` exactly, as a Python int (``values`` in ``[0, 1]``,
    each an integer multiple of ``2^-bits``)."""
    x = np.asarray(values, dtype=np.float64).copy()
    total = 0
    n_digits = bits // _DIGIT_BITS
    scale = float(1 << _DIGIT_BITS)
    # blocks of 2^30 terms: a digit sum stays below 2^63
    for start in range(0, x.shape[0], 1 << 30):
        part = x[start : start + (1 << 30)]
        acc = 0
        for _ in range(n_digits):
            part *= scale  # exact: a power of two
            digit = np.floor(part)
            part -= digit  # exact: the fractional part of a double
            acc = (acc << _DIGIT_BITS) + int(digit.astype(np.uint64).sum(dtype=np.uint64))
        if np.any(part != 0.0):  # cannot happen for terms in [1/N, 1]
            raise RuntimeError("internal error: an AP term is not a multiple of 2^-bits")
        total += acc
    return total


def block_stats(table, below, totals, ties, bits):
    """``(U part, AP part * 2^bits)`` of a block of consecutive distinct scores.

    ``below = (Pb, Nb)``: positives and negatives scored below the block's first score;
    ``totals = (n, m)``.
    """
    _, p, q = table
    n, m = totals
    if p.shape[0] == 0 or n == 0 or m == 0:
        return 0, 0
    pb = below[0] + np.concatenate(([0], np.cumsum(p)[:-1]))  # positives below each score
    nb = below[1] + np.concatenate(([0], np.cumsum(q)[:-1]))
    has = p > 0
    p, pb, nb, q = p[has], pb[has], nb[has], q[has]
    if ties == "sklearn":
        u = int(np.sum(p * (2 * nb + q), dtype=np.int64))
        t = n - pb
        ratio = t / (t + (m - nb))
        terms = np.repeat(ratio, p)
    else:
        u = int(np.sum(p * nb, dtype=np.int64))
        j = n - (below[0] + np.arange(int(p.sum()), dtype=np.int64))  # rank from the top
        f = np.repeat(m - nb, p)
        terms = j / (j + f)
    return u, _exact_sum(terms, bits)


def finish(u, ap_scaled, n, m, ties, bits):
    """``(auc, ap)`` from the exact totals (0.5 / 0 or 1 when a class is empty)."""
    if n == 0:
        return 0.5, 0.0
    if m == 0:
        return 0.5, 1.0
    den = 2.0 * float(n) * float(m) if ties == "sklearn" else float(n) * float(m)
    auc = float(u) / den
    ap = float(Fraction(ap_scaled, n << bits))  # correctly rounded once
    return auc, ap


def exact_auc_ap(pos, scores, ties):
    """In-memory ``(auc, ap, n_positive)``: the one-block case of :func:`dask_auc_ap`."""
    table = count_table(pos, scores)
    n, m = int(table[1].sum()), int(table[2].sum())
    bits = fraction_bits(scores.shape[0])
    u, ap_scaled = block_stats(table, (0, 0), (n, m), ties, bits)
    auc, ap = finish(u, ap_scaled, n, m, ties, bits)
    return auc, ap, n


# ------------------------------------------------------------------------------- Dask
def _sample_scores(table, k):
    """Up to ``k`` scores of ``table`` evenly spaced by row count, with their weights."""
    uniq, p, q = table
    if uniq.shape[0] == 0:
        return uniq, np.zeros(0)
    cum = np.cumsum(p + q)
    targets = (np.arange(1, k + 1) * cum[-1]) / (k + 1)
    idx = np.unique(np.minimum(np.searchsorted(cum, targets), uniq.shape[0] - 1))
    return uniq[idx], np.full(idx.shape[0], cum[-1] / max(idx.shape[0], 1))


def _cuts(samples, n_buckets):
    """``n_buckets - 1`` increasing cut scores from the partitions' weighted samples."""
    vals = np.concatenate([s for s, _ in samples])
    if vals.shape[0] == 0 or n_buckets <= 1:
        return np.zeros(0)
    w = np.concatenate([w for _, w in samples])
    order = np.argsort(vals, kind="stable")
    vals, w = vals[order], np.cumsum(w[order])
    targets = (np.arange(1, n_buckets) * w[-1]) / n_buckets
    return np.unique(vals[np.minimum(np.searchsorted(w, targets), vals.shape[0] - 1)])


def _split(table, cuts, n_buckets):
    """Slices of ``table`` per bucket ``[cuts[b-1], cuts[b])``; ``n_buckets`` of them
    (the last ones empty when there are fewer cuts)."""
    uniq, p, q = table
    edges = np.concatenate(([0], np.searchsorted(uniq, cuts, side="left"), [uniq.shape[0]]))
    out = [(uniq[a:b], p[a:b], q[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    empty = (uniq[:0], p[:0], q[:0])
    return out + [empty] * (n_buckets - len(out))


def _merge(pieces):
    """One table from slices of several tables (the same score may occur in several)."""
    uniq = np.concatenate([u for u, _, _ in pieces])
    p = np.concatenate([x for _, x, _ in pieces])
    q = np.concatenate([x for _, _, x in pieces])
    if uniq.shape[0] == 0:
        return uniq, p.astype(np.int64), q.astype(np.int64)
    out, inv = np.unique(uniq, return_inverse=True)
    return out, _sum_by(inv, p, out.shape[0]), _sum_by(inv, q, out.shape[0])


def _sum_by(inv, values, size):
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, inv, values)
    return out


def _bucket_totals(table):
    return int(table[1].sum()), int(table[2].sum())


def _offsets(totals):
    """Per bucket ``(Pb, Nb)``, and ``(n, m)``."""
    below, pb, nb = [], 0, 0
    for p, q in totals:
        below.append((pb, nb))
        pb, nb = pb + p, nb + q
    return below, (pb, nb)


def _bucket_stats(table, offsets, b, ties, bits):
    below, totals = offsets
    return block_stats(table, below[b], totals, ties, bits)


def _combine(stats, offsets):
    _, (n, m) = offsets
    return sum(u for u, _ in stats), sum(a for _, a in stats), n, m


def dask_auc_ap(pos, scores, ties, n_rows):
    """``(auc, ap, n_positive)`` of aligned 1-D Dask arrays by a distributed sort.

    One ``dask.compute`` returning four integers (module docstring). The graph is built
    as one low-level layer over the arrays' blocks (O(partitions x buckets) tasks).
    """
    import dask
    from dask.base import tokenize
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    pos_keys = list(pos.__dask_keys__())
    score_keys = list(scores.__dask_keys__())
    n_parts = len(score_keys)
    # buckets of about 2^22 rows (at least 4, at most one per partition): a bucket's
    # table fits a worker, and the all-to-all split has n_partitions x n_buckets pieces
    n_buckets = max(1, min(n_parts, max(4, -(-int(n_rows) // _BUCKET_ROWS))))
    bits = fraction_bits(n_rows)
    name = "skdp-rank-counts-" + tokenize(pos, scores, ties, n_rows)
    dsk = {}
    for i in range(n_parts):
        dsk[(name, "table", i)] = (count_table, pos_keys[i], score_keys[i])
        dsk[(name, "sample", i)] = (_sample_scores, (name, "table", i), n_buckets)
    samples = [(name, "sample", i) for i in range(n_parts)]
    dsk[(name, "cuts")] = (_cuts, samples, n_buckets)
    for i in range(n_parts):
        dsk[(name, "split", i)] = (_split, (name, "table", i), (name, "cuts"), n_buckets)
        for b in range(n_buckets):
            dsk[(name, "piece", i, b)] = (_getitem, (name, "split", i), b)
    for b in range(n_buckets):
        pieces = [(name, "piece", i, b) for i in range(n_parts)]
        dsk[(name, "bucket", b)] = (_merge, pieces)
        dsk[(name, "total", b)] = (_bucket_totals, (name, "bucket", b))
    dsk[(name, "offsets")] = (_offsets, [(name, "total", b) for b in range(n_buckets)])
    for b in range(n_buckets):
        dsk[(name, "stats", b)] = (
            _bucket_stats,
            (name, "bucket", b),
            (name, "offsets"),
            b,
            ties,
            bits,
        )
    stats = [(name, "stats", b) for b in range(n_buckets)]
    dsk[(name, "result")] = (_combine, stats, (name, "offsets"))
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[pos, scores])
    (u, ap_scaled, n, m) = dask.compute(Delayed((name, "result"), graph, layer=name))[0]
    auc, ap = finish(u, ap_scaled, n, m, ties, bits)
    return auc, ap, n


def _getitem(seq, i):
    return seq[i]


# ------------------------------------------------------------------ Dask input checks
class _Labels:
    """Exact partial of "the distinct labels" (at most three kept: more means
    non-binary); adding two is their union. Never leaves the metric's checks."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = frozenset(values)

    def __add__(self, other):
        union = self.values | other.values
        return _Labels(list(union)[:3] if len(union) > 3 else union)


def _check_block(y, s):
    """Finite labels and scores of one block (errors name the argument, never a value);
    returns the block's distinct labels."""
    y, s = np.asarray(y), np.asarray(s)
    if y.dtype.kind in "fc":
        check_finite(y, name="y_true")
    check_finite(s.astype(np.float64, copy=False), name="y_score")
    if y.dtype.kind in "biuf":
        return _Labels(np.unique(y)[:3].tolist())
    try:
        return _Labels(sorted(set(y.tolist()))[:3])
    except TypeError:
        raise TypeError(
            "y_true mixes labels that cannot be compared (e.g. None among numbers); "
            "drop or impute missing labels first"
        ) from None


def dask_rank_inputs(y_true, y_score, pos_label):
    """``(positive mask, float64 scores, N)`` as aligned 1-D Dask arrays, checked with
    one pass (labels binary, labels and scores finite) that returns at most three labels.
    """
    import dask.array as da

    y, s, N = as_1d_pair(y_true, y_score, ("y_true", "y_score"))
    if s.dtype.kind not in "biuf":
        raise ValueError("y_score must be numeric")
    if N == 0:
        raise ValueError("y_true is empty")
    first = y if is_dask_collection(y) else s
    if any(np.isnan(c) for c in first.chunks[0]):
        first = first.compute_chunk_sizes()
    rows = first.chunks[0]

    def aligned(a):
        if not is_dask_collection(a):
            return da.from_array(a, chunks=(rows,))
        if any(np.isnan(c) for c in a.chunks[0]):
            a = a.compute_chunk_sizes()
        return a.rechunk((rows,))

    y, s = aligned(y), aligned(s)
    labels = row_sum(_check_block, y, s)
    pos_label = _resolve_pos_label(list(labels.values), y.dtype, pos_label)
    pos = y == pos_label
    if not isinstance(pos, da.Array) or pos.dtype != np.bool_:
        pos = da.map_blocks(np.equal, y, pos_label, dtype=bool)
    return pos, s.astype(np.float64), N
