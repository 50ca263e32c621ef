"""Losses of :class:`~skdp.synthesis.DPGANSynthesizer` (per record, for ``torch.func.vmap``).

Each loss takes one record's module output (and, for the AC-GAN, its label code) and
returns a scalar, so that per-record gradients (:func:`skdp.training.per_sample_gradients`)
and per-record clipping bound one record's influence.

* WGAN (Arjovsky et al. 2017): the critic minimises ``D(fake) - D(real)``, the generator
  ``-D(fake)``;
* non-saturating GAN (Goodfellow et al. 2014): binary cross-entropy with logits;
* AC-GAN (Odena et al. 2017; Beaulieu-Jones et al. 2019): plus ``aux_loss_weight`` times
  the cross-entropy of the auxiliary classifier head on the record's label;
* the autoencoder of RDP-CGAN (Torfi et al. 2022): binary cross-entropy on binary and
  one-hot coordinates, squared error on numeric ones.
"""

from __future__ import annotations

__all__ = ["gan_losses", "reconstruction_loss"]


def gan_losses(loss, aux_loss_weight, conditional):
    """``(real_loss, fake_loss, gen_loss)``, each ``f(out, *c) -> scalar`` for one record.

    Parameters
    ----------
    loss : {"wgan", "gan"}
    aux_loss_weight : float
        Weight of the auxiliary classifier's cross-entropy (``conditional`` only).
    conditional : bool
        Whether the critic has an auxiliary head (output ``1 + n_classes`` values) and each
        record comes with a label code.
    """
    import torch

    F = torch.nn.functional
    wgan = loss == "wgan"
    lam = float(aux_loss_weight)

    def aux(out, c):
        return lam * F.cross_entropy(out[1:].unsqueeze(0), c.unsqueeze(0))

    def real_loss(out, *c):
        src = out[0]
        base = -src if wgan else F.binary_cross_entropy_with_logits(src, torch.ones_like(src))
        return base + (aux(out, c[0]) if conditional else 0.0)

    def fake_loss(out, *c):
        src = out[0]
        base = src if wgan else F.binary_cross_entropy_with_logits(src, torch.zeros_like(src))
        return base + (aux(out, c[0]) if conditional else 0.0)

    def gen_loss(out, *c):
        src = out[0]
        base = -src if wgan else F.binary_cross_entropy_with_logits(src, torch.ones_like(src))
        return base + (aux(out, c[0]) if conditional else 0.0)

    return real_loss, fake_loss, gen_loss


def reconstruction_loss(discrete):
    """Per-record autoencoder loss: BCE where ``discrete`` is True, squared error elsewhere.

    Parameters
    ----------
    discrete : torch.Tensor of bool, shape (n_encoded_features,)
        Binary and one-hot coordinates of the encoded row.
    """
    import torch

    def recon_loss(out, x):
        eps = 1e-6
        o = out.clamp(eps, 1 - eps)
        bce = -(x * torch.log(o) + (1 - x) * torch.log(1 - o))
        mse = (out - x) ** 2
        return torch.where(discrete, bce, mse).mean()

    return recon_loss
