"""DPGANSynthesizer's AC-GAN: the noisy 1-way marginals released per class and the
per-class calibration of the generator's output (post-processing)."""

import numpy as np
import pytest

pytest.importorskip("torch")

from skdp.synthesis import DPGANSynthesizer  # noqa: E402
from skdp.synthesis._gan._marginals import (  # noqa: E402
    _block_counts,
    pooled_marginals,
    release_class_marginals,
)

FAST = dict(n_iter=6, batch_size=32, hidden_size=8, latent_dim=4, device="cpu")


def _encoded(n=60, seed=0):
    """A small encoded table: a 3-level one-hot block and a binary coordinate."""
    rng = np.random.default_rng(seed)
    Z = np.zeros((n, 4))
    Z[np.arange(n), rng.integers(0, 3, n)] = 1.0
    Z[:, 3] = rng.random(n) < 0.3
    return Z, rng.integers(0, 2, n), [(0, 3), (3, 4)]


def test_one_row_changes_one_cell_of_each_table_sensitivity_sqrt_d():
    """Removing any row changes the per-class counts by exactly one cell per block: the
    L2 sensitivity is sqrt(d), that of the 1-way release (the same noise and account)."""
    Z, labels, blocks = _encoded()
    full = [_block_counts(Z[labels == k], blocks) for k in (0, 1)]
    for i in range(len(Z)):
        keep = np.arange(len(Z)) != i
        less = [_block_counts(Z[keep][labels[keep] == k], blocks) for k in (0, 1)]
        sq = sum(
            np.sum((a - b) ** 2)
            for fa, fb in zip(full, less, strict=True)
            for a, b in zip(fa, fb, strict=True)
        )
        assert sq == pytest.approx(len(blocks))


def test_noiseless_release_is_the_class_frequencies_and_pools_to_the_one_way():
    Z, labels, blocks = _encoded()
    per_class = release_class_marginals(Z, labels, 2, blocks, 0.0, np.random.default_rng(0))
    for k in (0, 1):
        np.testing.assert_allclose(per_class[k][0], Z[labels == k, :3].mean(axis=0))
        np.testing.assert_allclose(per_class[k][1][1], Z[labels == k, 3].mean())
    prior = np.bincount(labels) / len(labels)
    pooled = pooled_marginals(per_class, prior)
    np.testing.assert_allclose(pooled[0], Z[:, :3].mean(axis=0))


def test_noisy_release_is_a_distribution_per_class():
    Z, labels, blocks = _encoded()
    per_class = release_class_marginals(Z, labels, 2, blocks, 5.0, np.random.default_rng(1))
    for ps in per_class:
        for p in ps:
            assert np.all(p >= 0) and p.sum() == pytest.approx(1.0)


@pytest.mark.slow
def test_acgan_rows_of_each_class_follow_that_classs_marginals():
    """A binary column that is the label (almost): after the per-class calibration the
    rows generated for each class follow that class's noisy marginal."""
    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n)
    flag = np.where(rng.random(n) < 0.9, y, 1 - y)
    X = np.column_stack([rng.normal(size=n), flag])
    gan = DPGANSynthesizer(
        epsilon=5.0,
        bounds={0: (-4, 4)},
        column_types={1: "binary"},
        conditional="acgan",
        loss="gan",
        classes=[0, 1],
        random_state=0,
        **FAST,
    ).fit(X, y)
    assert len(gan.noisy_class_marginals_) == 2
    assert gan.epsilon_spent_ <= 5.0 + 1e-9
    for k in (0, 1):
        target = gan.noisy_class_marginals_[k][-1][1]  # P(flag = 1 | class k), noisy
        Xs, ys = gan.sample_labeled(4000, y=k, random_state=1)
        assert np.all(ys == k)
        assert np.mean(Xs[:, 1] == 1) == pytest.approx(target, abs=0.05)
    # the pooled release is the prior's mixture of the classes'
    pooled = pooled_marginals(gan.noisy_class_marginals_, gan.class_prior_)
    for a, b in zip(pooled, gan.noisy_marginals_, strict=True):
        np.testing.assert_allclose(a, b)


@pytest.mark.slow
def test_unconditional_fit_has_no_class_marginals_and_a_refit_drops_them():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(100, 2)), rng.integers(0, 2, 100)
    gan = DPGANSynthesizer(
        epsilon=2.0, bounds=(-4, 4), conditional="acgan", classes=[0, 1], **FAST
    ).fit(X, y)
    assert hasattr(gan, "noisy_class_marginals_")
    gan.set_params(conditional=None, classes=None).fit(X)
    assert not hasattr(gan, "noisy_class_marginals_")
