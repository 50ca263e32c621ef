"""
Private k-median clustering of tumour measurements
==================================================

:class:`~skdp.cluster.SubsampledExpMedian` draws candidate sets of centres from a
*public* candidate grid, independently of the data, and picks one with the exponential
mechanism scored by the (truncated) k-median cost of the private data -- pure
``epsilon``-DP. Left: the centres chosen at ``epsilon = 1`` and without privacy
(``epsilon = inf``, the best of the same candidate sets). Right: the k-median cost of
the chosen centres against ``epsilon`` (median over seeds).
"""

# %%
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer

from skdp.cluster import SubsampledExpMedian

data = load_breast_cancer()
cols = [list(data.feature_names).index(c) for c in ("mean radius", "mean texture")]
X = data.data[:, cols]

# Public candidate centres: a grid over round-number ranges that cover the documented
# feature ranges of the data set (radius 5-30, texture 5-40), fixed without reading the
# data.
gx, gy = np.meshgrid(np.linspace(5, 30, 21), np.linspace(5, 40, 21))
V = np.column_stack([gx.ravel(), gy.ravel()])

dp = SubsampledExpMedian(n_clusters=3, epsilon=1.0, candidates=V, random_state=0).fit(X)
best = SubsampledExpMedian(n_clusters=3, epsilon=math.inf, candidates=V, random_state=0).fit(X)
print(f"{dp.n_candidates_} candidate sets; sensitivity (grid diameter) {dp.sensitivity_:.1f}")
print("DP centres (epsilon=1):\n", dp.cluster_centers_)

epsilons = [0.1, 0.3, 1, 3, 10, 30, math.inf]
costs = [
    np.median(
        [
            -SubsampledExpMedian(n_clusters=3, epsilon=e, candidates=V, random_state=s)
            .fit(X)
            .score(X)
            for s in range(5)
        ]
    )
    for e in epsilons
]
for e, c in zip(epsilons, costs, strict=True):
    print(f"epsilon {e:>5}: median k-median cost {c:8.1f}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
ax = axes[0]
ax.scatter(V[:, 0], V[:, 1], s=2, c="lightgrey", label="public candidates")
ax.scatter(X[:, 0], X[:, 1], s=6, c=dp.predict(X), cmap="viridis", alpha=0.6)
ax.scatter(*dp.cluster_centers_.T, marker="*", s=300, c="red", ec="k", label="DP, eps=1")
ax.scatter(*best.cluster_centers_.T, marker="P", s=150, c="white", ec="k", label="eps=inf")
ax.set_xlabel("mean radius")
ax.set_ylabel("mean texture")
ax.legend(fontsize=8, loc="upper right")
ax.set_title("k = 3 centres")
ax = axes[1]
finite = [e for e in epsilons if math.isfinite(e)]
ax.plot(finite, costs[: len(finite)], "o-", label="SubsampledExpMedian (median of 5 seeds)")
ax.axhline(costs[-1], color="k", ls="--", label="best candidate set (eps=inf)")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("k-median cost (sum of distances)")
ax.legend(fontsize=8)
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    from pathlib import Path

    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
