"""
Error of DP evaluation metrics against epsilon
==============================================

Three DP metrics of a classifier on a private test set of 285 patients:
:func:`~skdp.metrics.dp_accuracy_score` (Laplace noise on the number of correct
predictions), :func:`~skdp.metrics.dp_roc_auc_score` and
:func:`~skdp.metrics.dp_average_precision_score` (smooth-sensitivity mechanisms, with
``delta = 1e-4``). The plot shows the median absolute error of a release, over 100
releases, as a function of ``epsilon``: accuracy has sensitivity ``1/n`` and is cheap to
release; the ranking metrics need more budget on a test set this small (at the smallest
budgets their releases are essentially noise clamped to ``[0, 1]``, hence the plateaus).
"""

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, average_precision_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp.metrics import dp_accuracy_score, dp_average_precision_score, dp_roc_auc_score

data = load_breast_cancer()
# A deliberately weak model on three texture/shape features (an AUC near 1 would hide
# the noise behind the clamp to [0, 1]).
X, y = data.data[:, [1, 4, 8]], data.target
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
model = make_pipeline(StandardScaler(), LogisticRegression(C=0.01)).fit(X_tr, y_tr)
score, pred = model.decision_function(X_te), model.predict(X_te)

metrics = {
    "accuracy": (accuracy_score(y_te, pred), lambda e, s: dp_accuracy_score(
        y_te, pred, epsilon=e, random_state=s)),
    "ROC AUC": (roc_auc_score(y_te, score), lambda e, s: dp_roc_auc_score(
        y_te, score, epsilon=e, delta=1e-4, random_state=s)),
    "average precision": (average_precision_score(y_te, score), lambda e, s: (
        dp_average_precision_score(y_te, score, epsilon=e, delta=1e-4, random_state=s))),
}  # fmt: skip
epsilons = np.logspace(-1, 1.5, 11)  # includes epsilon = 1 (index 4)
errors = {}
for name, (exact, release) in metrics.items():
    errors[name] = [np.median([abs(release(e, s) - exact) for s in range(100)]) for e in epsilons]
    print(f"{name:>18}: exact {exact:.3f}; median |error| at epsilon=1: {errors[name][4]:.4f}")

# %%
fig, ax = plt.subplots(figsize=(6, 4))
for name, err in errors.items():
    ax.plot(epsilons, err, "o-", label=name)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("median |DP release - exact value|")
ax.set_title(f"DP metrics on a test set of {len(y_te)} patients")
ax.legend()
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    from pathlib import Path

    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
