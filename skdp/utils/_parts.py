"""The keys of a part of ``privacy_breakdown_`` that a fit may repeat (rounds,
histograms): ``doc/glossary.rst``, "``privacy_breakdown_`` keys"."""

from __future__ import annotations

from skdp.utils._deprecation import RenamedKeys

__all__ = ["part_keys", "single_part_renamed"]


def part_keys(stem, n):
    """The keys of ``n`` parts named ``stem``: the bare ``stem`` for one part,
    ``stem_1``, ..., ``stem_n`` (numbered from 1) for several.

    Examples
    --------
    >>> from skdp.utils._parts import part_keys
    >>> part_keys("round", 1), part_keys("round", 3)
    (['round'], ['round_1', 'round_2', 'round_3'])
    """
    n = int(n)
    if n == 1:
        return [stem]
    return [f"{stem}_{i}" for i in range(1, n + 1)]


def single_part_renamed(breakdown, stem, where):
    """``breakdown`` whose key ``stem_1`` of before 0.2 (a single part numbered) still
    reads as ``stem``, with a ``FutureWarning`` (removed in 0.2), when ``stem`` is a
    single part of it; otherwise ``breakdown`` unchanged. ``where``:
    ``"Estimator.privacy_breakdown_"``, for the warning."""
    if stem not in breakdown:
        return breakdown
    return RenamedKeys(breakdown, {f"{stem}_1": stem}, where)
