"""
DP GAN synthetic data: correlations and marginals
=================================================

:class:`~skdp.synthesis.DPGANSynthesizer` trains a GAN whose critic (the only network
that sees real records) is trained with DP-SGD: Poisson sampling, per-record gradient
clipping, Gaussian noise once per step, PLD accountant over every critic step. The
generator only sees the critic, so the synthetic records are post-processing.

The figure compares the correlation matrices and two marginals of the real and the
synthetic diabetes records. The run is kept short (100 critic steps, i.e. 20 generator
steps) so that the example finishes quickly, and it shows what an *under-trained* DP GAN
looks like: the synthetic marginals are far off. GANs need thousands of steps and far
more than 442 records to do well; for a small table like this one,
:class:`~skdp.synthesis.DPHistogramSynthesizer` or :class:`~skdp.density.DPFlowDensity`
give better synthetic data at the same budget.
"""

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes

from skdp.metrics import correlation_distance, marginal_total_variation
from skdp.synthesis import DPGANSynthesizer

data = load_diabetes(scaled=False, as_frame=True)
cols = ["age", "bmi", "bp", "s5", "target"]
X = data.frame[cols]

# Public bounds: clinically plausible ranges and the documented range of the target
# (domain knowledge, never computed from the data).
bounds = {"age": (18, 90), "bmi": (15, 50), "bp": (50, 150), "s5": (3, 6.5), "target": (25, 346)}

gan = DPGANSynthesizer(
    epsilon=3.0,
    delta=1e-5,
    bounds=bounds,
    hidden_size=64,
    latent_dim=16,
    batch_size=64,
    loss="wgan",
    n_iter=100,
    learning_rate={"generator": 1e-3, "critic": 1e-3},
    device="cpu",
    random_state=0,
).fit(X)
S = gan.sample(len(X))
print(
    f"epsilon spent {gan.epsilon_spent_:.3f}, delta {gan.delta_spent_:g} ({gan.privacy_guarantee_})"
)
print(
    f"1-way marginal TV {marginal_total_variation(X, S):.3f}, "
    f"mean |correlation difference| {correlation_distance(X, S, norm='mean_abs'):.3f}"
)

# %%
fig, axes = plt.subplots(1, 4, figsize=(15, 3.6))
for ax, D, title in ((axes[0], X, "real"), (axes[1], S, "synthetic")):
    im = ax.imshow(np.corrcoef(D.to_numpy(float).T), vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(len(cols)), cols, rotation=45)
    ax.set_yticks(range(len(cols)), cols)
    ax.set_title(f"correlations, {title}")
fig.colorbar(im, ax=axes[1], fraction=0.046)
for ax, col in zip(axes[2:], ["bmi", "target"], strict=True):
    edges = np.linspace(*bounds[col], 21)
    ax.hist(X[col], bins=edges, density=True, alpha=0.5, label="real")
    ax.hist(S[col], bins=edges, density=True, histtype="step", lw=2, label="synthetic")
    ax.set_title(col)
axes[2].legend(fontsize=8)
fig.suptitle(f"DPGANSynthesizer (WGAN, DP critic), epsilon = {gan.epsilon_spent_:.2f}")
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    from pathlib import Path

    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
