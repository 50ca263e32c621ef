"""
DP linear regression: test R^2 against epsilon
==============================================

:class:`~skdp.linear_model.DPLinearRegression` (functional mechanism) perturbs the
coefficients of the least-squares objective with Laplace noise calibrated to public
bounds on the features and the target. The plot shows how the test :math:`R^2` on the
diabetes data grows with the privacy budget ``epsilon`` (median and range over seeds),
next to ordinary least squares. With only 331 training rows and 10 features, small
budgets give useless models: the noise does not shrink with ``n`` fast enough here.
"""

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split

from skdp.linear_model import DPLinearRegression

# Public bounds: plausible clinical ranges of the unscaled variables and the documented
# range of the target, declared before looking at the data (never computed from it).
FEATURE_BOUNDS = {
    "age": (18, 90),
    "sex": (1, 2),
    "bmi": (15, 50),
    "bp": (50, 150),
    "s1": (80, 350),
    "s2": (30, 250),
    "s3": (15, 110),
    "s4": (1, 10),
    "s5": (3, 6.5),
    "s6": (50, 150),
}
TARGET_BOUNDS = (25, 346)

data = load_diabetes(scaled=False, as_frame=True)
X, y = data.data[list(FEATURE_BOUNDS)], data.target
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
lo = np.array([b[0] for b in FEATURE_BOUNDS.values()], dtype=float)
hi = np.array([b[1] for b in FEATURE_BOUNDS.values()], dtype=float)

baseline = LinearRegression().fit(X_tr, y_tr).score(X_te, y_te)
epsilons = np.logspace(0, 4, 9)
scores = np.array(
    [
        [
            DPLinearRegression(
                epsilon=eps, bounds_X=(lo, hi), bounds_y=TARGET_BOUNDS, random_state=seed
            )
            .fit(X_tr, y_tr)
            .score(X_te, y_te)
            for seed in range(10)
        ]
        for eps in epsilons
    ]
)
for eps, s in zip(epsilons, np.median(scores, axis=1), strict=True):
    print(f"epsilon {eps:8.1f}: median test R^2 {s:7.3f}")
print(f"non-private OLS: test R^2 {baseline:.3f}")

# %%
fig, ax = plt.subplots(figsize=(6, 4))
clipped = np.clip(scores, -1, None)  # very negative R^2 drawn at -1
ax.fill_between(epsilons, clipped.min(1), clipped.max(1), alpha=0.3, label="range over 10 seeds")
ax.plot(epsilons, np.median(clipped, 1), "o-", label="DPLinearRegression (median)")
ax.axhline(baseline, color="k", ls="--", label="OLS (non-private)")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("test R^2 (clipped at -1)")
ax.set_title("Diabetes: utility of DP linear regression")
ax.legend(fontsize=8)
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    from pathlib import Path

    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
