"""
A differentially private ROC curve
==================================

The test set used to evaluate a model is private too. :func:`~skdp.metrics.dp_roc_auc_score`
releases the area under the ROC curve with a smooth-sensitivity mechanism (Lantz 2016,
ch. 7), and :func:`~skdp.metrics.binormal_roc_curve` turns that number into a whole ROC
curve (the binormal curve with that area) at no further privacy cost.

The band shows the binormal curves of 50 independent DP releases at ``epsilon = 1``
(``delta = 1e-4``) next to the exact (non-private) ROC curve of the test set.
"""

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp.metrics import binormal_roc_curve, dp_roc_auc_score

data = load_breast_cancer()
# A deliberately weak model on three texture/shape features (an AUC near 1 would hide
# the noise behind the clamp to [0, 1]).
X, y = data.data[:, [1, 4, 8]], data.target
# The model itself is trained without privacy here: this example is about the
# evaluation. Only the test set (the private data in question) is protected.
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
model = make_pipeline(StandardScaler(), LogisticRegression(C=0.01)).fit(X_tr, y_tr)
score = model.decision_function(X_te)

auc = roc_auc_score(y_te, score)
dp_aucs = np.array(
    [dp_roc_auc_score(y_te, score, epsilon=1.0, delta=1e-4, random_state=s) for s in range(50)]
)
print(
    f"exact test AUC {auc:.3f}; DP AUC at epsilon=1: median {np.median(dp_aucs):.3f}, "
    f"5-95% range [{np.quantile(dp_aucs, 0.05):.3f}, {np.quantile(dp_aucs, 0.95):.3f}]"
)

# %%
fpr_grid = np.linspace(0, 1, 201)
curves = np.array([binormal_roc_curve(a, fpr=fpr_grid)[1] for a in dp_aucs])
fpr, tpr, _ = roc_curve(y_te, score)

fig, ax = plt.subplots(figsize=(5, 5))
ax.fill_between(
    fpr_grid, np.quantile(curves, 0.05, 0), np.quantile(curves, 0.95, 0), alpha=0.3,
    label="DP binormal ROC, 5-95% of 50 releases",
)  # fmt: skip
ax.plot(fpr_grid, binormal_roc_curve(np.median(dp_aucs), fpr=fpr_grid)[1], label="median release")
ax.plot(fpr, tpr, "k", drawstyle="steps-post", label=f"exact ROC (AUC {auc:.3f})")
ax.plot([0, 1], [0, 1], ":", color="grey")
ax.set_xlabel("false-positive rate")
ax.set_ylabel("true-positive rate")
ax.set_title(f"Breast cancer test set ({len(y_te)} patients), epsilon = 1")
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    from pathlib import Path

    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
