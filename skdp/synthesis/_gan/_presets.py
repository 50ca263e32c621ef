"""Configurations of :meth:`~skdp.synthesis.DPGANSynthesizer.from_paper`.

* ``"sprint_acgan"``: the DP AC-GAN of B. K. Beaulieu-Jones et al., "Privacy-preserving
  generative deep neural networks support clinical data sharing", Circ. Cardiovasc. Qual.
  Outcomes, 2019;
* ``"rdp_cgan"``: RDP-CGAN of A. Torfi, E. A. Fox, C. K. Reddy, "Differentially private
  synthetic medical data generation using convolutional GANs", Information Sciences, 2022.
"""

from __future__ import annotations

from skdp.synthesis._gan._checkpoint import CheckpointSelection

__all__ = ["PRESETS"]

PRESETS = {
    # Beaulieu-Jones et al. (2019) (conv2d over the 3 x 12 grid is
    # replaced by conv1d over 3 channels x 12 visits; Poisson sampling replaces the paper's
    # with-replacement draws; declared bounds scale the data to [0, 1]).
    "sprint_acgan": dict(
        architecture="conv1d",
        feature_shape=(3, 12),
        autoencoder=False,
        conditional="acgan",
        loss="gan",
        n_critic=1,
        latent_dim=100,
        latent_distribution="uniform",
        label_embedding="multiply",
        learning_rate=2e-4,
        batch_size=1,
        n_iter=500 * 6000,  # 500 epochs of the paper's 6,000 training rows at batch size 1
        max_grad_norm=1e-4,
        noise_multiplier=1.0,
        epsilon=2.5,
        delta=1e-5,
        class_prior="uniform",
        checkpoint_selection=CheckpointSelection(
            n_checkpoints=10, top_k=5, scorers=("logistic_regression", "random_forest")
        ),
        integer_rounding="floor",
        numeric_encoding="scaled",  # [1] scales each value into one output
        calibrate_marginals=False,  # the paper's method: no marginal release
    ),
    # Torfi et al. (2022) (sigma calibrated: the paper gives none).
    "rdp_cgan": dict(
        architecture="conv1d",
        autoencoder=True,
        code_dim=128,
        latent_dim=100,
        latent_distribution="normal",
        loss="wgan",
        weight_clip=0.01,
        n_critic=1,
        max_grad_norm=1.0,
        learning_rate=5e-3,  # Adam betas stay (0.5, 0.999): the paper used (0.9, 0.999)
        batch_size=64,
        epsilon=1.0,
        delta=1e-5,
        numeric_encoding="scaled",  # one output per numeric column, as in the paper
        calibrate_marginals=False,  # the paper's method: no marginal release
    ),
}
