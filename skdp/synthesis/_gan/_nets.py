"""Torch networks of :class:`~skdp.synthesis.DPGANSynthesizer` (after Torfi et al. 2022, §IV-C).

Modules that see real rows (critic, encoder, decoder during autoencoder pre-training) are
per-record: no BatchNorm, only GroupNorm (a per-record normalisation) or nothing, so that
per-sample gradients (``torch.func.vmap``) and per-record clipping bound one record's
influence. The generator never sees real rows (it is post-processing of the private
critic); it uses GroupNorm too, so that its eval-mode output does not depend on running
statistics.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = [
    "Autoencoder",
    "CodeGenerator",
    "ConvCritic",
    "ConvDecoder",
    "ConvEncoder",
    "ConditionalGenerator",
    "MLPCritic",
    "MLPDecoder",
    "MLPEncoder",
    "OutputActivation",
    "build_networks",
    "conv_plan",
]

#: Default width of the MLP networks (``hidden_size=None``; measured in
#: ``benchmarks/gan.py``: wider critics and generators fitted worse under DP-SGD).
MLP_WIDTH = 32
#: Channel multipliers of the five conv blocks (16, 32, 64, 128, 128 at width 16).
_CONV_MULT = (1, 2, 4, 8, 8)


def conv_plan(length: int, n_blocks: int = 5) -> tuple[int, list[bool], list[int]]:
    """Down-sampling plan of the conv1d trunk (five blocks, as in Torfi et al. 2022).

    Block ``i`` halves the length (``Conv1d(k=4, s=2, p=1)``) while the current length is
    at least 8, otherwise keeps it (``Conv1d(k=3, s=1, p=1)``). The input is zero-padded
    at the end to a multiple of ``2**n_stride``.

    Returns
    -------
    padded_length : int
    strided : list of bool
        Whether each block halves the length.
    lengths : list of int
        Length after each block.
    """
    padded = int(length)
    for _ in range(10):
        cur, strided, lengths = padded, [], []
        for _ in range(n_blocks):
            s = cur >= 8
            strided.append(s)
            cur = cur // 2 if s else cur
            lengths.append(cur)
        m = 2 ** sum(strided)
        new = int(math.ceil(length / m) * m)
        if new == padded:
            return padded, strided, lengths
        padded = new
    return padded, strided, lengths  # pragma: no cover - converges in <= 2 rounds


def _groups(channels: int) -> int:
    """At most 8 groups, each of at least two channels (a one-channel group of length 1
    would normalise to a constant)."""
    return math.gcd(channels, max(1, min(8, channels // 2)))


class OutputActivation(nn.Module):
    """Sigmoid on numeric/binary coordinates, softmax on each one-hot block.

    ``n_classes > 0`` (the AC-GAN's generator): one more shift per class,
    ``class_offset[c]``, for the label ``condition`` that :class:`ConditionalGenerator`
    sets around each call (zeros unless calibrated to the noisy class-conditional
    marginals; not trained).
    """

    def __init__(self, width: int, softmax_blocks=(), n_classes: int = 0):
        super().__init__()
        self.width = int(width)
        self.softmax_blocks = [(int(a), int(b)) for a, b in softmax_blocks]
        #: shift of every pre-activation (zeros unless calibrated to the noisy marginals,
        #: :mod:`skdp.synthesis._gan._marginals`; not trained)
        self.register_buffer("offset", torch.zeros(self.width))
        if n_classes:
            self.register_buffer("class_offset", torch.zeros(int(n_classes), self.width))
        #: label codes of the rows of the current call (set by ConditionalGenerator)
        self.condition = None

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = h + self.offset.to(h.dtype)
        if self.condition is not None and hasattr(self, "class_offset"):
            h = h + self.class_offset[self.condition].to(h.dtype)
        if not self.softmax_blocks:
            return torch.sigmoid(h)
        pieces, pos = [], 0
        for a, b in self.softmax_blocks:
            if a > pos:
                pieces.append(torch.sigmoid(h[:, pos:a]))
            pieces.append(torch.softmax(h[:, a:b], dim=1))
            pos = b
        if pos < self.width:
            pieces.append(torch.sigmoid(h[:, pos:]))
        return torch.cat(pieces, dim=1)


class _ConvTrunk(nn.Module):
    """Five ``[Conv1d -> GroupNorm -> PReLU]`` blocks (no norm on the first)."""

    def __init__(self, in_channels: int, length: int, width: int):
        super().__init__()
        self.in_channels = int(in_channels)
        self.length = int(length)
        self.padded, self.strided, self.lengths = conv_plan(length)
        layers: list[nn.Module] = []
        c = self.in_channels
        self.channels = [width * m for m in _CONV_MULT]
        for i, (s, co) in enumerate(zip(self.strided, self.channels, strict=True)):
            layers.append(nn.Conv1d(c, co, 4, 2, 1) if s else nn.Conv1d(c, co, 3, 1, 1))
            if i > 0:
                layers.append(nn.GroupNorm(_groups(co), co))
            layers.append(nn.PReLU(co))
            c = co
        self.net = nn.Sequential(*layers)
        self.out_features = self.channels[-1] * self.lengths[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        h = x.reshape(b, self.in_channels, self.length)
        if self.padded > self.length:
            h = nn.functional.pad(h, (0, self.padded - self.length))  # exact zeros
        return self.net(h).reshape(b, self.out_features)  # no -1: b may be 0


class ConvCritic(nn.Module):
    """1-D conv critic/discriminator: trunk -> Linear(1 + n_classes).

    ``head_bias=False`` drops the head's bias: the WGAN objective does not depend on it,
    and its per-record gradient (of norm 1 for ``D(real)``) would use up the clipping norm
    while carrying nothing (the real and fake terms cancel).
    """

    def __init__(
        self, in_channels: int, length: int, width: int, n_classes: int = 0, head_bias=True
    ):
        super().__init__()
        self.trunk = _ConvTrunk(in_channels, length, width)
        self.head = nn.Linear(self.trunk.out_features, 1 + int(n_classes), bias=bool(head_bias))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(x))


class ConvEncoder(nn.Module):
    """1-D conv encoder: trunk -> Linear(code_dim) -> Tanh."""

    def __init__(self, in_channels: int, length: int, width: int, code_dim: int):
        super().__init__()
        self.trunk = _ConvTrunk(in_channels, length, width)
        self.head = nn.Linear(self.trunk.out_features, int(code_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.head(self.trunk(x)))


class ConvDecoder(nn.Module):
    """Mirror of the conv trunk: ``Linear(in -> c5 L5)`` -> transposed blocks -> activation.

    Used as the autoencoder's decoder (input: the code) and as the conv1d generator without
    an autoencoder (input: the latent vector, plus the label for a conditional model).
    """

    def __init__(self, in_features, in_channels, length, width, activation: nn.Module):
        super().__init__()
        self.in_channels, self.length = int(in_channels), int(length)
        self.padded, self.strided, self.lengths = conv_plan(length)
        ch = [width * m for m in _CONV_MULT]
        self.c_last, self.l_last = ch[-1], self.lengths[-1]
        self.inp = nn.Sequential(
            nn.Linear(int(in_features), self.c_last * self.l_last), nn.PReLU(self.c_last)
        )
        layers: list[nn.Module] = []
        outs = [self.in_channels, *ch[:-1]]
        for i in reversed(range(len(ch))):
            ci, co = ch[i], outs[i]
            if self.strided[i]:
                layers.append(nn.ConvTranspose1d(ci, co, 4, 2, 1))
            else:
                layers.append(nn.Conv1d(ci, co, 3, 1, 1))
            if i > 0:
                layers.append(nn.GroupNorm(_groups(co), co))
                layers.append(nn.PReLU(co))
        self.net = nn.Sequential(*layers)
        self.activation = activation

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        b = h.shape[0]
        u = self.inp[0](h)
        u = self.inp[1](u.reshape(b, self.c_last, self.l_last))
        out = self.net(u)[:, :, : self.length]
        return self.activation(out.reshape(b, self.in_channels * self.length))


class MLPCritic(nn.Module):
    """``[Linear -> LeakyReLU(0.2)] x 2 -> Linear(1 + n_classes)`` (``head_bias``: as
    :class:`ConvCritic`)."""

    def __init__(self, in_features: int, hidden: int, n_classes: int = 0, head_bias=True):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(int(in_features), hidden),
            nn.LeakyReLU(0.2),
            nn.Linear(hidden, hidden),
            nn.LeakyReLU(0.2),
            nn.Linear(hidden, 1 + int(n_classes), bias=bool(head_bias)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class MLPEncoder(nn.Module):
    def __init__(self, in_features: int, hidden: int, code_dim: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(int(in_features), hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, code_dim)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.net(x))


class MLPDecoder(nn.Module):
    """``Linear -> LayerNorm -> LeakyReLU`` x 2 -> Linear(out) -> activation."""

    def __init__(self, in_features: int, hidden: int, out_features: int, activation: nn.Module):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(int(in_features), hidden),
            nn.LayerNorm(hidden),
            nn.LeakyReLU(0.2),
            nn.Linear(hidden, hidden),
            nn.LayerNorm(hidden),
            nn.LeakyReLU(0.2),
            nn.Linear(hidden, int(out_features)),
        )
        self.activation = activation

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.activation(self.net(h))


class CodeGenerator(nn.Module):
    """Generator of Torfi et al. (2022): ``(latent, 1)`` -> 1-D transposed convs -> Tanh code.

    ``ConvTranspose1d(k4, s1, p0)`` to length 4, then ``ConvTranspose1d(k4, s2, p1)``
    blocks (channels halving, GroupNorm + LeakyReLU(0.2)) until the length reaches
    ``code_dim``, a ``Conv1d`` to one channel, crop to ``code_dim``, Tanh.
    """

    def __init__(self, in_features: int, code_dim: int, width: int):
        super().__init__()
        self.code_dim = int(code_dim)
        c = 16 * width
        layers: list[nn.Module] = [
            nn.ConvTranspose1d(int(in_features), c, 4, 1, 0),
            nn.GroupNorm(_groups(c), c),
            nn.LeakyReLU(0.2),
        ]
        length = 4
        while length < self.code_dim:
            co = max(width, c // 2)
            layers += [
                nn.ConvTranspose1d(c, co, 4, 2, 1),
                nn.GroupNorm(_groups(co), co),
                nn.LeakyReLU(0.2),
            ]
            c, length = co, length * 2
        layers.append(nn.Conv1d(c, 1, 3, 1, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = self.net(h.unsqueeze(-1))[:, 0, : self.code_dim]
        return torch.tanh(out)


class ConditionalGenerator(nn.Module):
    """Wraps a generator body with the AC-GAN label input.

    ``label_embedding="multiply"``: ``h = z * Embedding(c)`` (Beaulieu-Jones et al. 2019);
    ``"concat"``: ``h = [z, one_hot(c)]``. Unconditional when ``n_classes == 0``.
    """

    def __init__(self, body: nn.Module, latent_dim: int, n_classes: int, label_embedding: str):
        super().__init__()
        self.body = body
        self.n_classes = int(n_classes)
        self.label_embedding = label_embedding
        if self.n_classes and label_embedding == "multiply":
            self.embedding = nn.Embedding(self.n_classes, int(latent_dim))
            nn.init.normal_(self.embedding.weight, 1.0, 0.1)

    def forward(self, z: torch.Tensor, c: torch.Tensor | None = None) -> torch.Tensor:
        if not self.n_classes:
            return self.body(z)
        if self.label_embedding == "multiply":
            h = z * self.embedding(c)
        else:
            h = torch.cat([z, nn.functional.one_hot(c, self.n_classes).to(z.dtype)], dim=1)
        acts = [m for m in self.body.modules() if isinstance(m, OutputActivation)]
        for act in acts:  # the per-class output shift sees each row's label
            act.condition = c
        try:
            return self.body(h)
        finally:
            for act in acts:
                act.condition = None


class Autoencoder(nn.Module):
    """``x -> decoder(encoder(x))`` (trained with DP-SGD as one module)."""

    def __init__(self, encoder: nn.Module, decoder: nn.Module):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encoder(x))


def build_networks(
    D,
    softmax_blocks,
    n_classes,
    *,
    architecture,
    feature_shape,
    hidden_size,
    autoencoder,
    code_dim,
    latent_dim,
    label_embedding,
    critic_bias=True,
):
    """The modules of one fit: ``{"critic", "generator", "autoencoder", "decoder"}``.

    Parameters
    ----------
    D : int
        Encoded width of a row.
    softmax_blocks : list of (int, int)
        ``[start, stop)`` of each one-hot block of the encoded row.
    n_classes : int
        0 for an unconditional model.
    architecture, feature_shape, hidden_size, autoencoder, code_dim, latent_dim,
    label_embedding
        As the estimator's parameters (``hidden_size`` resolved: an int).
    critic_bias : bool, default=True
        Whether the critic's head has a bias (``False`` for the WGAN loss).
    """
    conv = architecture == "conv1d"
    width = int(hidden_size) if hidden_size else (16 if conv else MLP_WIDTH)
    K = int(n_classes)
    if conv:
        C, L = (1, D) if feature_shape is None else tuple(feature_shape)
        if C * L != D:
            raise ValueError(
                f"feature_shape={tuple(feature_shape)} does not match the {D} encoded features"
            )
    g_in = latent_dim + (K if (K and label_embedding == "concat") else 0)
    decoder = None
    if autoencoder:
        if conv:
            enc = ConvEncoder(C, L, width, code_dim)
            decoder = ConvDecoder(code_dim, C, L, width, OutputActivation(D, softmax_blocks))
            body = CodeGenerator(g_in, code_dim, width)
        else:
            enc = MLPEncoder(D, width, code_dim)
            decoder = MLPDecoder(code_dim, width, D, OutputActivation(D, softmax_blocks))
            body = MLPDecoder(g_in, width, code_dim, nn.Tanh())
        ae = Autoencoder(enc, decoder)
    else:
        ae = None
        act = OutputActivation(D, softmax_blocks, K)
        body = ConvDecoder(g_in, C, L, width, act) if conv else MLPDecoder(g_in, width, D, act)
    if conv:
        critic = ConvCritic(C, L, width, K, critic_bias)
    else:
        critic = MLPCritic(D, width, K, critic_bias)
    generator = ConditionalGenerator(body, latent_dim, K, label_embedding)
    return {"critic": critic, "generator": generator, "autoencoder": ae, "decoder": decoder}
