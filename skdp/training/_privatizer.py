"""Clip-and-sum and the Gaussian privatizer: the one place DP-SGD noise is drawn.

For per-record gradients ``g_i``, clipping norm ``C``, noise multiplier ``sigma`` and the
expected batch size ``B = q n`` (Abadi et al. 2016):

``g_hat = (sum_i g_i min(1, C / ||g_i||) + N(0, sigma^2 C^2 I)) / B``

with the norm flat over all parameters, the noise drawn once on the sum (never per record)
and the division by the *expected* batch size (the realised one is private).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

__all__ = ["GaussianPrivatizer", "clip_and_sum"]


def clip_and_sum(
    per_sample: dict[str, torch.Tensor], max_grad_norm: float
) -> tuple[dict[str, torch.Tensor], torch.Tensor, int]:
    """Flat L2 clipping of every record's gradient, then the sum over records.

    Returns
    -------
    summed : dict {name: tensor of shape param.shape}
        ``sum_i g_i min(1, C / ||g_i||)`` with the norm over all parameters together.
    norms : torch.Tensor of shape (b,)
        The unclipped per-record norms (private: never release them).
    n_nonfinite : int
        Records whose gradient was not finite (replaced by 0).
    """
    ref = next(iter(per_sample.values()))
    b = ref.shape[0]
    if b == 0:
        zero = torch.zeros(0, dtype=ref.dtype, device=ref.device)
        summed = {
            k: torch.zeros(v.shape[1:], dtype=v.dtype, device=v.device)
            for k, v in per_sample.items()
        }
        return summed, zero, 0
    flat = [g.reshape(b, -1) for g in per_sample.values()]
    sq = torch.stack([(f * f).sum(1) for f in flat]).sum(0)
    norms = sq.sqrt()
    finite = torch.isfinite(norms)
    safe = torch.where(finite & (norms > 0), norms, torch.ones_like(norms))
    factor = torch.clamp(max_grad_norm / safe, max=1.0)
    factor = torch.where(finite, factor, torch.zeros_like(factor))
    summed = {}
    for k, g in per_sample.items():
        gf = g.reshape(b, -1)
        gf = torch.where(finite[:, None], gf, torch.zeros_like(gf))
        summed[k] = (factor @ gf).reshape(g.shape[1:])
    return summed, norms, int((~finite).sum().item())


class GaussianPrivatizer:
    """Gaussian noise ``N(0, sigma^2 C^2 I)`` once on a clipped sum, then division by ``B``.

    Parameters
    ----------
    noise_multiplier : float
        ``sigma`` >= 0.
    max_grad_norm : float or None
        Clipping norm ``C`` (``None`` only with ``private=False``).
    expected_batch_size : float
        ``B = q n`` (public).
    generator : torch.Generator or None
        The ``noise`` stream, on the device of the gradients (required when private).
    private : bool, default=True
        ``False``: no clipping and no noise; :meth:`privatize` only divides by ``B``
        (ordinary mini-batch training).

    Attributes
    ----------
    noise_std : float
        ``sigma * C`` (0 when not private): the SD of the noise on the sum.
    """

    def __init__(
        self,
        *,
        noise_multiplier: float,
        max_grad_norm: float | None,
        expected_batch_size: float,
        generator: torch.Generator | None,
        private: bool = True,
    ):
        if not (0 < float(expected_batch_size) < math.inf):
            raise ValueError("expected_batch_size must be a positive finite number")
        self.private = bool(private)
        if self.private:
            if max_grad_norm is None or not (0 < float(max_grad_norm) < math.inf):
                raise ValueError("DP-SGD needs a finite max_grad_norm > 0")
            if not (0 <= float(noise_multiplier) < math.inf):
                raise ValueError(f"noise_multiplier must be >= 0, got {noise_multiplier!r}")
            if not isinstance(generator, torch.Generator):
                raise TypeError("a private privatizer needs a torch.Generator (noise stream)")
        self.noise_multiplier = float(noise_multiplier) if self.private else 0.0
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        self.expected_batch_size = float(expected_batch_size)
        self.noise_std = self.noise_multiplier * self.max_grad_norm if self.private else 0.0
        self._generator = generator

    def clip_and_sum(self, per_sample: Mapping[str, torch.Tensor]) -> tuple[dict, int]:
        """``(sum of clipped per-record gradients, non-finite count)``; private mode clips
        to ``max_grad_norm`` (:func:`clip_and_sum`), non-private mode only sums."""
        if self.private:
            summed, _, n_bad = clip_and_sum(dict(per_sample), self.max_grad_norm)
            return summed, n_bad
        return {k: v.sum(0) for k, v in per_sample.items()}, 0

    def privatize(self, summed: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``(summed + N(0, sigma^2 C^2 I)) / B``, one draw per coordinate, in ``summed``'s
        order (a fixed order makes the noise reproducible); ``summed / B`` if not private.

        ``summed`` must be a sum of per-record gradients clipped to ``max_grad_norm``
        (L2 sensitivity ``C`` under add/remove-one): the privatizer cannot check it.
        """
        out = {}
        for k, s in summed.items():
            if self.private:
                noise = torch.randn(
                    s.shape, generator=self._generator, device=s.device, dtype=s.dtype
                )
                out[k] = (s + self.noise_std * noise) / self.expected_batch_size
            else:
                out[k] = s / self.expected_batch_size
        return out
