"""The private Gaussian-copula base of :class:`~skdp.density.DPFlowDensity` (``base="copula"``).

Two fixed (non-trainable) flow layers in front of the trainable flow, both released with
the Gaussian mechanism on sufficient statistics of the encoded rows:

1. :class:`MarginalGaussianiser`: per numeric coordinate, a noisy histogram on a public
   grid of the encoded range ``[-2, 2]`` gives a piecewise-linear CDF ``F`` (mixed with a
   small uniform share); ``g = Phi^{-1}(u0 + (1 - 2 u0) F(x))`` maps the column onto about
   ``N(0, 1)`` (the marginal transform of Gaussian-copula synthesizers; Li, Xiong & Jiang
   2014). Outside ``[-2, 2]`` it continues linearly, so every point has a finite density.
2. :class:`FixedLinear`: a DP affine whitening ``z = L^{-1} g`` of the numeric block, with
   ``L L^T`` the correlation matrix read off a noisy sum of ``g g^T`` over rows clipped to
   L2 norm ``R``.

The trainable flow (zero-initialised, so it starts at the identity) then learns only the
residual structure that a Gaussian copula cannot carry. With no trainable layer the model
is a DP Gaussian copula. Histograms and the correlation sum are functions of the multiset
of (dequantised, clipped) rows; the released layers hold noised values only.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from skdp.flows._base import Transform

__all__ = [
    "FixedLinear",
    "MarginalGaussianiser",
    "copula_layers",
    "default_n_bins",
    "noisy_correlation_factor",
    "noisy_marginal_probs",
]

#: Share of each marginal's probability spread uniformly over the grid (a floor on the
#: histogram density that keeps every released CDF strictly increasing).
UNIFORM_SHARE = 0.05
#: ``u`` is mapped into ``[U_MARGIN, 1 - U_MARGIN]`` before ``Phi^{-1}``: |g| <= 3.09.
U_MARGIN = 1e-3
#: Smallest eigenvalue kept in the released correlation matrix.
EIGEN_FLOOR = 0.02
#: ``|g|`` is held at most this far out (a value far outside the bounds, even infinite,
#: gets a finite, very small density instead of a NaN).
G_MAX = 1e4
_RANGE = (-2.0, 2.0)


def default_n_bins(n):
    """Histogram bins per numeric column from the public ``n``: a power of two near
    ``sqrt(n) / 3``, between 8 and 64 (32 at ``n = 10,000``)."""
    target = math.sqrt(max(int(n), 1)) / 3.0
    return int(min(64, max(8, 2 ** round(math.log2(max(target, 1.0))))))


def correlation_clip_norm(d_num):
    """Public L2 clipping norm ``R`` of a row of Gaussianised numeric coordinates: the
    99th percentile of a chi distribution with ``d_num`` degrees of freedom."""
    from scipy.stats import chi2

    return float(math.sqrt(chi2.ppf(0.99, max(int(d_num), 1))))


def _bin_index(x, n_bins):
    a, b = _RANGE
    idx = np.floor((np.clip(x, a, b) - a) / (b - a) * n_bins).astype(np.int64)
    return np.minimum(idx, n_bins - 1)


def noisy_marginal_probs(Z, numeric, n_bins, sigma, rng):
    """``(D, n_bins)`` bin probabilities: per numeric coordinate a histogram of ``Z`` on
    the public grid plus ``N(0, sigma^2)`` per bin (one draw for all columns), negative
    counts set to 0, normalised and mixed with :data:`UNIFORM_SHARE` of the uniform;
    other coordinates get the uniform. ``sigma`` is the noise SD already scaled by the
    L2 sensitivity (``sqrt(d_num)`` per row, ``k sqrt(d_num)`` per patient)."""
    D = Z.shape[1]
    probs = np.full((D, n_bins), 1.0 / n_bins)
    cols = np.flatnonzero(numeric)
    if cols.size == 0:
        return probs
    counts = np.zeros((cols.size, n_bins))
    for i, j in enumerate(cols):
        counts[i] = np.bincount(_bin_index(Z[:, j], n_bins), minlength=n_bins)
    counts = np.maximum(counts + sigma * rng.standard_normal(counts.shape), 0.0)
    total = counts.sum(axis=1, keepdims=True)
    safe = np.where(total > 0, total, 1.0)
    hist = np.where(total > 0, counts / safe, 1.0 / n_bins)
    probs[cols] = (1.0 - UNIFORM_SHARE) * hist + UNIFORM_SHARE / n_bins
    return probs


def noisy_correlation_factor(G, numeric, clip_norm, sigma, rng):
    """``(D, D)`` lower-triangular ``L``: identity outside the numeric block, inside it the
    Cholesky factor of the correlation matrix of the noisy ``sum_i c_i c_i^T`` (rows of
    the numeric block of ``G`` scaled to L2 norm at most ``clip_norm``; noise
    ``N(0, sigma^2)`` on each upper-triangle entry, mirrored), with eigenvalues floored
    at :data:`EIGEN_FLOOR`. ``sigma`` is already scaled by the L2 sensitivity
    (``clip_norm^2`` per row, ``k clip_norm^2`` per patient). Scale-free: no row count."""
    D = G.shape[1]
    L = np.eye(D)
    cols = np.flatnonzero(numeric)
    if cols.size < 2:
        return L
    C = G[:, cols]
    norms = np.linalg.norm(C, axis=1)
    C = C * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))[:, None]
    S = C.T @ C
    iu = np.triu_indices(cols.size)
    noise = np.zeros_like(S)
    noise[iu] = sigma * rng.standard_normal(iu[0].size)
    S = S + noise
    S = np.triu(S) + np.triu(S, 1).T
    diag = np.maximum(np.diag(S), 1e-12 + 0 * np.diag(S))
    diag = np.where(np.diag(S) > 0, diag, 1.0)
    R = S / np.sqrt(np.outer(diag, diag))
    np.fill_diagonal(R, 1.0)
    w, V = np.linalg.eigh((R + R.T) / 2)
    R = (V * np.maximum(w, EIGEN_FLOOR)) @ V.T
    s = np.sqrt(np.diag(R))
    R = R / np.outer(s, s)
    L[np.ix_(cols, cols)] = np.linalg.cholesky(R)
    return L


class MarginalGaussianiser(Transform):
    """Fixed per-coordinate map ``x -> Phi^{-1}(u0 + (1 - 2 u0) F(x))`` (masked coordinates
    pass unchanged); ``F`` is piecewise linear on the public grid of ``[-2, 2]`` with bin
    probabilities ``probs`` (rows of masked coordinates ignored), extended linearly in
    ``g`` outside the grid. Buffers only: no trainable parameter.

    Parameters
    ----------
    probs : ndarray of shape (n_features, n_bins)
        Released bin probabilities (rows summing to 1, all positive).
    mask : ndarray of shape (n_features,) of bool
        Coordinates that are transformed.
    """

    def __init__(self, probs, mask):
        probs = np.asarray(probs, dtype=np.float64)
        D, B = probs.shape
        super().__init__(D)
        a, b = _RANGE
        width = (b - a) / B
        cdf = np.concatenate([np.zeros((D, 1)), np.cumsum(probs, axis=1)], axis=1)
        cdf /= cdf[:, -1:]
        self.register_buffer("probs", torch.as_tensor(probs))
        self.register_buffer("cdf", torch.as_tensor(cdf))
        self.register_buffer("edges", torch.as_tensor(a + width * np.arange(B + 1)))
        self.register_buffer("mask", torch.as_tensor(np.asarray(mask, dtype=np.float64)))
        self.width = float(width)
        self.lo, self.hi = float(a), float(b)

    def _core(self, x):
        """``(g, log dg/dx)`` of coordinates clipped to the grid."""
        a, b = self.lo, self.hi
        xc = x.clamp(a, b)
        lo = self.edges[:-1]
        t = ((xc.unsqueeze(-1) - lo) / self.width).clamp(0.0, 1.0)  # (..., D, B)
        F = (t * self.probs).sum(-1)
        inside = ((xc.unsqueeze(-1) >= lo) & (xc.unsqueeze(-1) < self.edges[1:])).to(x.dtype)
        top = (xc >= b).to(x.dtype)
        dens = (inside * self.probs).sum(-1) + top * self.probs[:, -1]
        dens = dens / self.width
        u = U_MARGIN + (1.0 - 2.0 * U_MARGIN) * F
        g = torch.special.ndtri(u)
        log_phi = -0.5 * g * g - 0.5 * math.log(2.0 * math.pi)
        log_dg = torch.log(dens * (1.0 - 2.0 * U_MARGIN)) - log_phi
        return g, log_dg, xc

    def forward(self, x):
        g, log_dg, xc = self._core(x)
        # linear continuation outside the grid, held finite (a density of about 0 far out)
        g = (g + (x - xc) * torch.exp(log_dg)).clamp(-G_MAX, G_MAX)
        out = torch.where(self.mask > 0, g, x)
        return out, (self.mask * log_dg).sum(-1)

    def inverse_and_ladj(self, z):
        # sampling direction (never under vmap): bisection-free inversion of the
        # piecewise-linear CDF on the grid, linear continuation beyond it
        a, b = self.lo, self.hi
        gmin = float(torch.special.ndtri(torch.tensor(U_MARGIN, dtype=torch.float64)))
        u = (torch.special.ndtr(z) - U_MARGIN) / (1.0 - 2.0 * U_MARGIN)
        u = u.clamp(0.0, 1.0)
        x = torch.empty_like(z)
        for j in range(self.n_features):
            cdf = self.cdf[j].to(z.dtype)
            k = torch.searchsorted(cdf, u[..., j].contiguous(), right=True)
            k = k.clamp(1, cdf.numel() - 1)
            c0, c1 = cdf[k - 1], cdf[k]
            frac = ((u[..., j] - c0) / (c1 - c0).clamp_min(1e-30)).clamp(0.0, 1.0)
            x[..., j] = a + (k - 1 + frac).to(z.dtype) * self.width
        x = x.clamp(a, b)
        g, log_dg, _ = self._core(x)
        beyond = torch.where(z.abs() > -gmin, (z - g) / torch.exp(log_dg), torch.zeros_like(z))
        x = x + beyond
        out = torch.where(self.mask > 0, x, z)
        return out, -(self.mask * log_dg).sum(-1)


class FixedLinear(Transform):
    """Fixed ``z = L^{-1} x`` with a released lower-triangular ``L`` (buffers only)."""

    def __init__(self, L):
        L = np.asarray(L, dtype=np.float64)
        super().__init__(L.shape[0])
        self.register_buffer("L", torch.as_tensor(L))
        self.register_buffer("L_inv", torch.as_tensor(np.linalg.inv(L)))
        self.log_det_L = float(np.sum(np.log(np.abs(np.diag(L)))))

    def forward(self, x):
        z = x @ self.L_inv.T
        return z, torch.full(x.shape[:-1], -self.log_det_L, dtype=x.dtype, device=x.device)

    def inverse_and_ladj(self, z):
        x = z @ self.L.T
        return x, torch.full(z.shape[:-1], self.log_det_L, dtype=z.dtype, device=z.device)


def copula_layers(Z, numeric, plan, rng, dequantise=None):
    """``[MarginalGaussianiser, FixedLinear]`` released from the encoded rows ``Z`` (numpy)
    under ``plan`` (its ``n_bins``, ``clip_norm`` and the two noise SDs, sensitivity
    included); ``dequantise``: a per-record numpy map applied first (its own noise)."""
    if not np.any(numeric):  # nothing to Gaussianise or whiten: no layer, no spend
        return []
    Zd = Z if dequantise is None else dequantise(Z)
    probs = noisy_marginal_probs(Zd, numeric, plan.n_bins, plan.sigma_marginals, rng)
    marg = MarginalGaussianiser(probs, numeric)
    with torch.no_grad():
        G = marg(torch.as_tensor(Zd, dtype=torch.float64))[0].numpy()
    L = noisy_correlation_factor(G, numeric, plan.clip_norm, plan.sigma_correlation, rng)
    return [marg, FixedLinear(L)]


def as_frozen(layers: list, like: nn.Module):
    """The layers cast to the dtype and device of ``like``'s parameters."""
    p = next(like.parameters(), None)
    if p is None:
        return layers
    return [layer.to(device=p.device, dtype=p.dtype) for layer in layers]
