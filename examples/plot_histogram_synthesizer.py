"""
Synthetic diabetes records from a DP histogram
==============================================

:class:`~skdp.synthesis.DPHistogramSynthesizer` cuts every column into bins fixed by a
*public* schema, adds Laplace noise to every cell of the histogram (empty cells too),
drops cells below a threshold and draws synthetic rows from the rest. The whole
``fit`` is ``epsilon``-DP (pure DP, add/remove one row).

Here the columns are split into two groups (``projections``), each with its own noisy
histogram at ``epsilon / 2``: a joint histogram of six columns would have too many cells
for 442 patients. The figure compares the real and synthetic marginals.
"""

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes

from skdp.metrics import marginal_total_variation
from skdp.synthesis import DPHistogramSynthesizer

data = load_diabetes(scaled=False, as_frame=True)
X = data.frame[["age", "sex", "bmi", "bp", "s5", "target"]].copy()
X["sex"] = X["sex"].map({1.0: "sex 1", 2.0: "sex 2"})
X["age"] = X["age"].astype(int)

# %%
# Public bounds: clinically plausible ranges (adult cohort, BMI, mean arterial pressure,
# log serum triglycerides) and the documented range of the progression score. They are
# domain knowledge, declared before looking at the data -- never computed from it.
bounds = {"age": (18, 90), "bmi": (15, 50), "bp": (50, 150), "s5": (3, 6.5), "target": (25, 346)}
categories = {"sex": ["sex 1", "sex 2"]}

synth = DPHistogramSynthesizer(
    epsilon=1.0,
    bounds=bounds,
    categories=categories,
    column_types={"age": "integer"},  # whole years: declared (an int dtype is not)
    projections=[["age", "sex", "bp"], ["bmi", "s5", "target"]],
    n_bins=5,  # public choice; the default (Lei's rule) gives 3 bins for n = 442
    representative="uniform",
    random_state=0,
).fit(X)
S = synth.sample(len(X))
print(f"epsilon spent: {synth.epsilon_spent_} ({synth.privacy_guarantee_})")
print("bins per column:", synth.n_bins_)
print(f"1-way marginal TV (real vs synthetic): {marginal_total_variation(X, S):.3f}")

# %%
# Real versus synthetic marginals (the evaluation reads the real data: it is for the
# data custodian, not for release).
fig, axes = plt.subplots(2, 3, figsize=(11, 6))
for ax, col in zip(axes.ravel(), X.columns, strict=True):
    if col == "sex":
        levels = categories["sex"]
        real = [np.mean(X[col] == v) for v in levels]
        fake = [np.mean(S[col] == v) for v in levels]
        pos = np.arange(len(levels))
        ax.bar(pos - 0.2, real, 0.4, label="real")
        ax.bar(pos + 0.2, fake, 0.4, label="synthetic (eps=1)")
        ax.set_xticks(pos, levels)
    else:
        edges = np.linspace(*bounds[col], 21)
        ax.hist(X[col], bins=edges, density=True, alpha=0.5, label="real")
        ax.hist(S[col], bins=edges, density=True, histtype="step", lw=2, label="synthetic")
    ax.set_title(col)
axes[0, 0].legend(fontsize=8)
fig.suptitle("DPHistogramSynthesizer on the diabetes data, epsilon = 1")
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    from pathlib import Path

    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
