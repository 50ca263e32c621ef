"""Sensitivities of generic queries: counts, bounded sums and means, quantile utilities.

Public via :mod:`skdp.mechanisms.sensitivity`.
"""

from __future__ import annotations

from skdp.utils._groups import check_max_rows_per_group


def _check_neighbor(neighbor):
    if neighbor not in ("add_remove", "replace"):
        raise ValueError(f"neighbor must be 'add_remove' or 'replace', got {neighbor!r}")
    return neighbor


def count_sensitivity(*, neighbor="add_remove"):
    """Sensitivity of one count ``#{rows : predicate(row)}``: ``1``.

    Neighbouring relation: **add/remove one row** (library default) or **replace one
    row** (``neighbor="replace"``): either way a single count changes by at most 1
    (Dwork et al. 2006; Lantz 2016 §2.4). For a whole histogram
    (disjoint cells) use :func:`histogram_sensitivity` (L1: 1 add/remove, 2 replace).

    Parameters
    ----------
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    float
    """
    _check_neighbor(neighbor)
    return 1.0


def bounded_sum_sensitivity(lo, hi, *, neighbor="add_remove"):
    """Per-coordinate sensitivity of ``sum(clip(x, lo, hi))``.

    * add/remove one row (library default): ``max(|lo|, |hi|)`` (the added or removed
      value itself);
    * replace one row: ``hi − lo``.

    Tight in both cases (Dwork & Roth 2014 §3.3; :ref:`neighbouring-relation`). For a
    vector-valued sum the L1 sensitivity is the sum of the returned coordinates and
    the L2 sensitivity is bounded by their Euclidean norm.

    Parameters
    ----------
    lo, hi : float or array-like (broadcast), ``lo <= hi``
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    float or ndarray
    """
    import numpy as np

    _check_neighbor(neighbor)
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    if np.any(lo > hi) or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("bounds must be finite with lo <= hi")
    out = np.maximum(np.abs(lo), np.abs(hi)) if neighbor == "add_remove" else hi - lo
    return float(out) if out.ndim == 0 else out


def bounded_mean_sensitivity(lo, hi, n, *, neighbor="add_remove"):
    """Sensitivity of the mean ``sum(clip(x, lo, hi)) / n`` with a **public** ``n``.

    The estimator divides the clipped sum by the public row count ``n`` (library
    default relation: add/remove one row, ``n`` public; :ref:`neighbouring-relation`), so the
    sensitivity is :func:`bounded_sum_sensitivity` divided by ``n``:
    ``max(|lo|, |hi|) / n`` (add/remove) or ``(hi − lo) / n`` (replace). Dividing by the
    private, actual row count is a different query and is not covered.

    Parameters
    ----------
    lo, hi : float or array-like
    n : int, ``>= 1``
        Public number of rows.
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    float or ndarray
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return bounded_sum_sensitivity(lo, hi, neighbor=neighbor) / float(n)


def quantile_utility_sensitivity(*, neighbor="add_remove"):
    """Sensitivity of the quantile utility ``u(D, y) = −|#{x in D : x < y} − q |D||``: ``1``.

    Used by :func:`skdp.mechanisms.private_quantile` (Smith 2011). Add/remove one
    row changes the rank by 0 or 1 and ``q |D|`` by ``q``, in the same direction, so
    ``u`` moves by at most ``max(q, 1 − q) <= 1``; replace one row keeps ``|D|`` and
    moves the rank by at most 1: the bound of one count (:func:`count_sensitivity`).

    Parameters
    ----------
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    float
        ``1.0`` under either relation.
    """
    return count_sensitivity(neighbor=neighbor)


def group_sensitivity(row_sensitivity, max_rows_per_group):
    """Sensitivity of a sum of per-row terms when the privacy unit is a group of rows.

    Neighbouring relation: **add/remove one group with all its rows**, after each group
    is bounded to at most ``k = max_rows_per_group`` rows (``skdp.utils._groups``). A
    statistic that is a sum of per-row terms ``sum_i f(x_i)`` whose row-level
    (add/remove one row) sensitivity in a norm is ``Delta`` moves by the sum of at most
    ``k`` such terms when a group is added or removed, so by the triangle inequality its
    sensitivity in the same norm (L1 or L2) is at most ``k Delta``; the bound is attained
    when the ``k`` rows are equal and each attains ``Delta`` (group privacy for sums,
    Dwork & Roth 2014, Thm 2.2, without its ``e^{(k-1) eps} delta`` loss, because the
    sensitivity itself is scaled before the noise is calibrated). The same holds for
    the smallest eigenvalue of a Gram matrix (Weyl's inequality applied ``k`` times) and
    for a count of rows with a property (``k``).

    Parameters
    ----------
    row_sensitivity : float
        ``Delta``, the add/remove-one-row sensitivity.
    max_rows_per_group : int or None
        ``k >= 1``; ``None`` for a row-level release (``row_sensitivity`` is returned
        as it is).

    Returns
    -------
    float

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import count_sensitivity, group_sensitivity
    >>> group_sensitivity(count_sensitivity(), 5)
    5.0
    """
    if max_rows_per_group is None:  # a row-level release: the row's, unchanged
        return row_sensitivity
    return float(check_max_rows_per_group(max_rows_per_group)) * float(row_sensitivity)
