"""Independent references shared by the brute-force sensitivity tests."""

from __future__ import annotations

import math


def truncated_cost(D, F, V, delta, metric):
    """Independent reference: sum over points of min(delta, distance to nearest centre)."""
    total = 0.0
    for x in D:
        if metric == "euclidean":
            d = min(math.dist(x, V[f]) for f in F)
        else:
            d = min(sum(abs(a - b) for a, b in zip(x, V[f], strict=True)) for f in F)
        total += min(delta, d)
    return total
