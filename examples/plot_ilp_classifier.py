"""
A private rule learner for malignancy
=====================================

:class:`~skdp.ilp.DPILPClassifier` learns a short disjunction of conjunctive rules over
binary atoms, searching the lattice of clauses with noisy coverage counts (two-sided
geometric noise; pure ``epsilon``-DP). The atoms here are "feature above a cutoff" for a
few tumour measurements of the breast-cancer data; the target is *malignant*.

The cutoffs are round numbers fixed in advance within each feature's documented range
(public knowledge, not quantiles of this data). The plot shows test accuracy against
``epsilon`` (median and range over seeds) next to the same search without noise.
"""

# %%
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from skdp.ilp import DPILPClassifier

data = load_breast_cancer(as_frame=True)
CUTOFFS = {  # public, fixed in advance
    "mean radius": 15.0,
    "mean texture": 20.0,
    "mean concavity": 0.1,
    "mean concave points": 0.05,
    "worst radius": 17.0,
    "worst smoothness": 0.15,
    "worst concave points": 0.15,
    "worst symmetry": 0.3,
}
atoms = pd.DataFrame({f"{c} > {t:g}": (data.data[c] > t).astype(int) for c, t in CUTOFFS.items()})
malignant = (data.target == 0).astype(int)  # sklearn codes malignant as 0
A_tr, A_te, y_tr, y_te = train_test_split(atoms, malignant, test_size=0.3, random_state=0)

clf = DPILPClassifier(epsilon=1.0, n_clauses=2, max_clause_length=2, random_state=0)
clf.fit(A_tr, y_tr)
print("rules learned at epsilon=1:", " OR ".join("(" + " AND ".join(c) + ")" for c in clf.clauses_))
print(f"test accuracy {clf.score(A_te, y_te):.3f}; epsilon spent {clf.epsilon_spent_}")

epsilons = [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
acc = np.array(
    [
        [
            DPILPClassifier(epsilon=e, n_clauses=2, max_clause_length=2, random_state=s)
            .fit(A_tr, y_tr)
            .score(A_te, y_te)
            for s in range(10)
        ]
        for e in epsilons
    ]
)
exact = DPILPClassifier(epsilon=math.inf, n_clauses=2, max_clause_length=2).fit(A_tr, y_tr)
print("rules without noise:", exact.clauses_)

# %%
fig, ax = plt.subplots(figsize=(6, 4))
ax.fill_between(epsilons, acc.min(1), acc.max(1), alpha=0.3, label="range over 10 seeds")
ax.plot(epsilons, np.median(acc, 1), "o-", label="DPILPClassifier (median)")
ax.axhline(exact.score(A_te, y_te), color="k", ls="--", label="same search, no noise")
ax.axhline(max(y_te.mean(), 1 - y_te.mean()), color="grey", ls=":", label="majority class")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.set_title("Rules for malignancy (2 clauses of length <= 2)")
ax.legend(fontsize=8)
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    from pathlib import Path

    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
