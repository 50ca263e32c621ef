"""Masked autoregressive flow (Papamakarios et al., 2017) built from MADE conditioners.

One layer and stacking with the order reversed between blocks as in Papamakarios et al.
(2017) and the DP-NF code of Su et al. (2023); skdp adds a soft clamp of the log-scale and
leaves out BatchNorm (it mixes records); direction convention: :doc:`architecture`.
"""

from __future__ import annotations

import torch

from skdp.flows._base import Flow, Transform, _check_positive_int
from skdp.flows._elementwise import Affine, InverseTransform
from skdp.flows._made import MADE, resolve_order

__all__ = ["MAFLayer", "MAF", "IAF", "soft_clamp"]


def soft_clamp(a: torch.Tensor, bound: float | None) -> torch.Tensor:
    """Smoothly clamp ``a`` to ``(-bound, bound)`` as ``bound * tanh(a / bound)``.

    ``bound=None`` returns ``a`` unchanged. The map is smooth and strictly increasing, and the
    same clamped value is used in both directions, so bijection and log-dets stay exact.
    """
    if bound is None:
        return a
    return bound * torch.tanh(a / bound)


def _check_clamp(alpha_clamp):
    if alpha_clamp is None:
        return None
    alpha_clamp = float(alpha_clamp)
    if not alpha_clamp > 0 or alpha_clamp == float("inf"):
        raise ValueError("alpha_clamp must be a positive finite number or None.")
    return alpha_clamp


def _stack(n_features, n_layers, normalization, make_layer):
    """Check ``n_layers`` and ``normalization``, then stack ``make_layer(k)`` for each ``k``.

    With ``normalization="affine"`` an :class:`Affine` layer (identity init) follows each
    layer; ``make_layer`` is called in layer order (it may draw from a generator).
    """
    _check_positive_int(n_layers, "n_layers")
    if normalization not in ("none", "affine"):
        raise ValueError(
            f"normalization must be 'none' or 'affine' (no BatchNorm in skdp.flows), "
            f"got {normalization!r}."
        )
    transforms = []
    for k in range(n_layers):
        transforms.append(make_layer(k))
        if normalization == "affine":
            transforms.append(Affine(n_features))
    return transforms


class MAFLayer(Transform):
    """One affine autoregressive layer.

    Density direction (one parallel pass)::

        (mu, a) = MADE(x);  alpha = c * tanh(a / c)
        z = (x - mu) * exp(-alpha),   log|det dz/dx| = -sum(alpha)

    Sampling direction (``d`` sequential passes): ``x_i = z_i * exp(alpha_i) + mu_i`` in the
    order of the input degrees, ``log|det dx/dz| = +sum(alpha)``.

    Parameters
    ----------
    n_features : int
        Dimension ``d`` (``d = 1``: ``mu`` and ``alpha`` are learnable constants, i.e. the layer
        is an elementwise affine map).
    hidden_features : tuple of int, default=(64, 64)
        Hidden widths of the MADE (each ``>= d - 1``).
    order : None, "reversed" or permutation, default=None
        Autoregressive order (MADE input degrees).
    activation : {"relu", "tanh"}, default="relu"
    alpha_clamp : float or None, default=3.0
        Soft-clamp bound ``c`` of the log-scale: ``alpha = c * tanh(a / c)`` so each layer scales
        by at most ``exp(c)`` per coordinate (guards ``exp`` overflow under noisy DP-SGD;
        ``None`` = no clamp, as in the code of Su et al. 2023).
    generator : torch.Generator, optional
        Source of the initial weights.
    zero_init_output : bool, default=False
        Start as the identity map (MADE output layer initialised to zero).

    Attributes
    ----------
    made : MADE
        The conditioner, with ``2 * d`` outputs (``mu`` then ``a``).

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import MAFLayer
    >>> layer = MAFLayer(3, (8,)).double()
    >>> x = torch.randn(5, 3, dtype=torch.float64)
    >>> z, ladj = layer(x)
    >>> torch.allclose(layer.inverse(z), x)
    True
    """

    def __init__(
        self,
        n_features: int,
        hidden_features: tuple[int, ...] = (64, 64),
        order=None,
        activation: str = "relu",
        alpha_clamp: float | None = 3.0,
        *,
        generator: torch.Generator | None = None,
        zero_init_output: bool = False,
    ) -> None:
        super().__init__(n_features)
        self.alpha_clamp = _check_clamp(alpha_clamp)
        self.made = MADE(
            self.n_features,
            hidden_features,
            n_outputs_per_feature=2,
            order=order,
            activation=activation,
            generator=generator,
            zero_init_output=zero_init_output,
        )

    def _mu_alpha(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.made(x)
        d = self.n_features
        mu = out[..., :d]
        alpha = soft_clamp(out[..., d:], self.alpha_clamp)
        return mu, alpha

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, alpha = self._mu_alpha(x)
        z = (x - mu) * torch.exp(-alpha)
        return z, -alpha.sum(-1)

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # After pass k the k+1 first coordinates in the order are exact; alpha/mu of the last
        # pass only depend on coordinates that were already exact, so they are exact too.
        x = torch.zeros_like(z)
        alpha = torch.zeros_like(z)
        for _ in range(self.n_features):
            mu, alpha = self._mu_alpha(x)
            x = z * torch.exp(alpha) + mu
        return x, alpha.sum(-1)


class MAF(Flow):
    """Masked autoregressive flow: a stack of :class:`MAFLayer` with alternating orders.

    Parameters
    ----------
    n_features : int
        Data dimension ``d``.
    n_layers : int, default=5
        Number of MADE layers ``K``.
    hidden_features : tuple of int, default=(64, 64)
        Hidden widths of each MADE (each ``>= d - 1``).
    activation : {"relu", "tanh"}, default="relu"
    alpha_clamp : float or None, default=3.0
        Soft-clamp bound of every layer's log-scale (see :class:`MAFLayer`).
    order : {"reversed", "random"}, default="reversed"
        How layer orders vary: ``"reversed"`` alternates ``0..d-1`` and its reverse
        (Papamakarios et al. 2017; essential for expressiveness); ``"random"`` draws a fixed
        random permutation per layer from ``generator`` at construction (never from data),
        kept as a buffer.
    normalization : {"none", "affine"}, default="none"
        ``"affine"`` appends an :class:`Affine` layer (identity init) after each MADE layer.
        There is deliberately no BatchNorm/ActNorm (they mix records or initialise from data).
    generator : torch.Generator, optional
        Source of the initial weights (and of random orders).
    zero_init_output : bool, default=False
        Start every layer as the identity (the flow's density is then ``N(0, I)``).

    Attributes
    ----------
    transforms : torch.nn.ModuleList
        The layers in data -> latent order.

    Notes
    -----
    Density evaluation is one parallel pass per layer; sampling needs ``d`` sequential passes per
    layer. No layer mixes records of a batch and nothing is initialised from data, so per-record
    gradients are functions of that record only (required by DP-SGD).

    References
    ----------
    .. [1] G. Papamakarios, T. Pavlakou, I. Murray, "Masked Autoregressive Flow for Density
       Estimation", NeurIPS 2017.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import MAF
    >>> flow = MAF(2, n_layers=2, hidden_features=(8,)).double()
    >>> g = torch.Generator().manual_seed(0)
    >>> x = flow.sample(4, generator=g)
    >>> flow.log_prob(x).shape
    torch.Size([4])
    """

    def __init__(
        self,
        n_features: int,
        n_layers: int = 5,
        hidden_features: tuple[int, ...] = (64, 64),
        activation: str = "relu",
        alpha_clamp: float | None = 3.0,
        *,
        order: str = "reversed",
        normalization: str = "none",
        generator: torch.Generator | None = None,
        zero_init_output: bool = False,
    ) -> None:
        if order not in ("reversed", "random"):
            raise ValueError(f"order must be 'reversed' or 'random', got {order!r}.")

        def layer(k):
            if order == "reversed":
                layer_order = None if k % 2 == 0 else "reversed"
            else:
                layer_order = torch.randperm(n_features, generator=generator)
            return MAFLayer(
                n_features,
                hidden_features,
                order=resolve_order(layer_order, n_features),
                activation=activation,
                alpha_clamp=alpha_clamp,
                generator=generator,
                zero_init_output=zero_init_output,
            )

        transforms = _stack(n_features, n_layers, normalization, layer)
        super().__init__(self._arrange(transforms), n_features=n_features)

    @staticmethod
    def _arrange(transforms):
        """The layers in data -> latent order (the MAF keeps them as built)."""
        return transforms


class IAF(MAF):
    """Inverse autoregressive flow: the :class:`MAF` with its two directions swapped.

    Each layer is ``InverseTransform(MAFLayer(...))``: sampling (``inverse``,
    ``sample_and_log_prob``) is one parallel pass per layer, while density evaluation
    (``forward``, ``log_prob``) needs ``d`` sequential passes per layer. This is the flow used as
    a variational sampler (Kingma et al. 2016; Su et al. 2023, Section 4).

    Parameters
    ----------
    n_features, n_layers, hidden_features, activation, alpha_clamp, order, normalization, \
generator, zero_init_output
        As for :class:`MAF`.

    Attributes
    ----------
    transforms : torch.nn.ModuleList
        The layers in data -> latent order.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import IAF
    >>> flow = IAF(3, n_layers=2, hidden_features=(8,)).double()
    >>> x, lp = flow.sample_and_log_prob(4, generator=torch.Generator().manual_seed(0))
    >>> torch.allclose(lp, flow.log_prob(x))
    True
    """

    @staticmethod
    def _arrange(transforms):
        """The MAF's layers, each inverted, in reversed order."""
        return [InverseTransform(t) for t in reversed(transforms)]
