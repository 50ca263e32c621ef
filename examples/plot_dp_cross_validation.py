"""
Model selection with DP cross-validation scores
===============================================

:func:`~skdp.metrics.make_dp_scorer` wraps a DP metric as a scikit-learn scorer, so that
``GridSearchCV`` and ``cross_validate`` see only DP scores of the validation folds;
:func:`~skdp.metrics.cv_privacy_spend` gives the total budget of the run (disjoint folds
compose in parallel, candidates sequentially). The plot compares the DP and the exact
cross-validated AUC of a regularisation path.

Only the *scores* are private here: the models are trained without privacy, and the
selected model would need a DP training algorithm to be released.
"""

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp.metrics import cv_privacy_spend, make_dp_scorer

X, y = load_breast_cancer(return_X_y=True)
Cs = np.logspace(-4, 1, 6)
cv = KFold(5, shuffle=True, random_state=0)
pipe = make_pipeline(StandardScaler(), LogisticRegression())
grid = {"logisticregression__C": Cs}

eps_per_score = 1.0
dp_scorer = make_dp_scorer("roc_auc", epsilon=eps_per_score, delta=1e-5, random_state=0)
dp_search = GridSearchCV(pipe, grid, cv=cv, scoring=dp_scorer, refit=False).fit(X, y)
exact_search = GridSearchCV(pipe, grid, cv=cv, scoring="roc_auc", refit=False).fit(X, y)

total = cv_privacy_spend(epsilon=eps_per_score, delta=1e-5, n_splits=5, n_candidates=len(Cs))
print(f"total privacy spend of the DP grid search: epsilon={total[0]:g}, delta={total[1]:g}")
print("selected C (DP):   ", dp_search.best_params_["logisticregression__C"])
print("selected C (exact):", exact_search.best_params_["logisticregression__C"])

# %%
fig, ax = plt.subplots(figsize=(6, 4))
ax.errorbar(Cs, dp_search.cv_results_["mean_test_score"],
            yerr=dp_search.cv_results_["std_test_score"], fmt="o-", capsize=3,
            label=f"DP AUC ({eps_per_score} per fold score)")  # fmt: skip
ax.plot(Cs, exact_search.cv_results_["mean_test_score"], "k--", label="exact AUC")
ax.set_xscale("log")
ax.set_xlabel("C (inverse regularisation)")
ax.set_ylabel("5-fold cross-validated AUC")
ax.set_title(f"DP grid search, total epsilon = {total[0]:g}")
ax.legend(fontsize=8)
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    from pathlib import Path

    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
