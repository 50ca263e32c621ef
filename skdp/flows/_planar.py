"""Planar (Rezende & Mohamed, 2015) and orthogonal Sylvester (van den Berg et al., 2018) flows.

The sampling flows of Bridges, Tombs & Stanley (2023), whose code does not enforce the
invertibility conditions. Under skdp's convention (:doc:`architecture`, "Flow direction")
these flows are defined in the sampling direction ``z -> x``
(closed form), so here that closed form is :meth:`inverse` / :meth:`inverse_and_ladj`, and the
density direction :meth:`forward` (``x -> z``) is computed numerically.

Unlike the paper's code, the invertibility conditions are **enforced** by reparametrisation:

* planar: ``w^T u_hat >= -1`` with ``u_hat = u + (m(w^T u) - w^T u) w / ||w||^2`` and
  ``m(a) = -1 + softplus(a)`` (Rezende & Mohamed, App. A);
* Sylvester: ``diag(R) = tanh(rho)``, ``diag(R_hat) = tanh(rho_hat)`` so ``R_ii R_hat_ii > -1``,
  which with ``h = tanh`` (``0 < h' <= 1``) makes every layer a bijection.

``forward`` solves the triangular system of scalar monotone equations by a fixed number of
bisection steps on a provable bracket (on detached values: no data-dependent control flow, no
in-place writes on inputs) followed by one Newton step with gradients, which gives exact
implicit-function gradients at convergence.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from skdp.flows._base import Transform

__all__ = ["Planar", "Sylvester"]

_BISECTION_STEPS = 40  # then one Newton step: error ~ (2**-40 * bracket)**2


def _solve_monotone(t, scale, slope, shift):
    """Solve ``t = y + scale * tanh(slope * y + shift)`` for ``y`` (elementwise).

    Requires ``1 + scale * slope * tanh' > 0`` (strictly increasing in ``y``). The root lies in
    ``[t - |scale|, t + |scale|]``. Bisection on detached values, then one Newton step that
    carries gradients (implicit function theorem).
    """
    td, sd, kd, hd = t.detach(), scale.detach(), slope.detach(), shift.detach()
    lo = td - sd.abs()
    hi = td + sd.abs()
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        above = mid + sd * torch.tanh(kd * mid + hd) > td
        hi = torch.where(above, mid, hi)
        lo = torch.where(above, lo, mid)
    y0 = 0.5 * (lo + hi)
    th = torch.tanh(slope * y0 + shift)
    resid = y0 + scale * th - t
    deriv = 1.0 + scale * slope * (1.0 - th * th)
    return y0 - resid / deriv


class Planar(Transform):
    """Planar flow layer ``x = z + u_hat * tanh(w^T z + b)`` (sampling direction).

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    generator : torch.Generator, optional
        Source of the initial parameters (``U(-0.01, 0.01)``, as in the ExpM+NF code).

    Attributes
    ----------
    u, w : torch.nn.Parameter of shape (d,)
    b : torch.nn.Parameter of shape ()

    Notes
    -----
    ``log|det dx/dz| = log(1 + tanh'(w^T z + b) w^T u_hat)``, positive argument by construction.
    ``inverse``/``inverse_and_ladj`` is the closed form; ``forward`` (density direction) solves the
    scalar equation ``w^T x = s + w^T u_hat tanh(s + b)`` for ``s = w^T z``. ``w`` must be
    nonzero (true almost surely for the random init).

    References
    ----------
    .. [1] D. Rezende, S. Mohamed, "Variational Inference with Normalizing Flows", ICML 2015.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import Planar
    >>> layer = Planar(3, generator=torch.Generator().manual_seed(0)).double()
    >>> z = torch.randn(4, 3, dtype=torch.float64)
    >>> x, ladj = layer.inverse_and_ladj(z)
    >>> torch.allclose(layer(x)[0], z)
    True
    """

    def __init__(self, n_features: int, *, generator: torch.Generator | None = None) -> None:
        super().__init__(n_features)
        self.u = nn.Parameter(torch.empty(self.n_features))
        self.w = nn.Parameter(torch.empty(self.n_features))
        self.b = nn.Parameter(torch.empty(()))
        with torch.no_grad():
            for p in (self.u, self.w, self.b):
                nn.init.uniform_(p, -0.01, 0.01, generator=generator)

    def u_hat(self) -> torch.Tensor:
        """The constrained ``u`` with ``w^T u_hat = -1 + softplus(w^T u) > -1``."""
        wu = torch.dot(self.w, self.u)
        m = -1.0 + F.softplus(wu)
        return self.u + (m - wu) * self.w / torch.dot(self.w, self.w)

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        u = self.u_hat()
        th = torch.tanh(z @ self.w + self.b)
        x = z + th[..., None] * u
        ladj = torch.log1p((1.0 - th * th) * torch.dot(self.w, u))
        return x, ladj

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        u = self.u_hat()
        wu = torch.dot(self.w, u)
        t = x @ self.w
        s = _solve_monotone(t, wu.expand_as(t), torch.ones_like(t), self.b.expand_as(t))
        th = torch.tanh(s + self.b)
        z = x - th[..., None] * u
        return z, -torch.log1p((1.0 - th * th) * wu)


class Sylvester(Transform):
    """Orthogonal (Householder) Sylvester flow layer (sampling direction ``z -> x``).

    ``x = z + Q R tanh(R_hat Q^T z + c)`` with ``Q`` (``d x m``, orthonormal columns) the first
    ``m`` columns of a product of ``k`` Householder reflections, and ``R``, ``R_hat`` upper
    triangular ``m x m`` with diagonals ``tanh(rho)``, ``tanh(rho_hat)``.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    n_components : int, optional
        ``m <= d`` (default ``min(d, 4)``).
    n_householder : int, optional
        Number ``k >= 1`` of Householder reflections (default ``m``).
    generator : torch.Generator, optional
        Source of the initial parameters (``U(-1, 1)``, as in the ExpM+NF code).

    Attributes
    ----------
    householder : torch.nn.Parameter of shape (k, d)
    r_upper, r_hat_upper : torch.nn.Parameter of shape (m, m)
        Strictly upper parts of ``R`` and ``R_hat`` (the lower part and diagonal are unused).
    rho, rho_hat : torch.nn.Parameter of shape (m,)
    c : torch.nn.Parameter of shape (m,)

    Notes
    -----
    ``log|det dx/dz| = sum_i log(1 + tanh'(r_i) R_ii R_hat_ii)`` with ``r = R_hat Q^T z + c``
    (Sylvester's determinant identity). ``forward`` writes ``z = Q y + (I - Q Q^T) x`` and solves
    ``Q^T x = y + R tanh(R_hat y + c)`` by back-substitution, one monotone scalar equation per
    component.

    References
    ----------
    .. [1] R. van den Berg, L. Hasenclever, J. Tomczak, M. Welling, "Sylvester Normalizing Flows
       for Variational Inference", UAI 2018.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import Sylvester
    >>> layer = Sylvester(4, n_components=2, generator=torch.Generator().manual_seed(0)).double()
    >>> z = torch.randn(5, 4, dtype=torch.float64)
    >>> torch.allclose(layer(layer.inverse(z))[0], z)
    True
    """

    def __init__(
        self,
        n_features: int,
        n_components: int | None = None,
        n_householder: int | None = None,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(n_features)
        d = self.n_features
        m = min(d, 4) if n_components is None else int(n_components)
        if not 1 <= m <= d:
            raise ValueError(f"n_components must be in [1, n_features={d}], got {n_components}.")
        k = m if n_householder is None else int(n_householder)
        if k < 1:
            raise ValueError(f"n_householder must be >= 1, got {n_householder}.")
        self.n_components = m
        self.n_householder = k
        self.householder = nn.Parameter(torch.empty(k, d))
        self.r_upper = nn.Parameter(torch.empty(m, m))
        self.r_hat_upper = nn.Parameter(torch.empty(m, m))
        self.rho = nn.Parameter(torch.empty(m))
        self.rho_hat = nn.Parameter(torch.empty(m))
        self.c = nn.Parameter(torch.empty(m))
        with torch.no_grad():
            for p in self.parameters():
                nn.init.uniform_(p, -1.0, 1.0, generator=generator)
        self.register_buffer("_triu", torch.triu(torch.ones(m, m), diagonal=1))

    def _q(self) -> torch.Tensor:
        d, m = self.n_features, self.n_components
        q = torch.eye(d, m, dtype=self.householder.dtype, device=self.householder.device)
        for i in range(self.n_householder - 1, -1, -1):
            v = self.householder[i]
            q = q - (2.0 / torch.dot(v, v)) * torch.outer(v, v @ q)
        return q

    def _r(self) -> tuple[torch.Tensor, torch.Tensor]:
        r = self.r_upper * self._triu + torch.diag(torch.tanh(self.rho))
        r_hat = self.r_hat_upper * self._triu + torch.diag(torch.tanh(self.rho_hat))
        return r, r_hat

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = self._q()
        r, r_hat = self._r()
        pre = (z @ q) @ r_hat.T + self.c
        th = torch.tanh(pre)
        x = z + (th @ r.T) @ q.T
        diag = torch.diagonal(r) * torch.diagonal(r_hat)
        ladj = torch.log1p((1.0 - th * th) * diag).sum(-1)
        return x, ladj

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = self._q()
        r, r_hat = self._r()
        a = x @ q  # (..., m)
        m = self.n_components
        ys: list[torch.Tensor | None] = [None] * m
        ths: list[torch.Tensor | None] = [None] * m
        for kk in range(m - 1, -1, -1):
            t = a[..., kk]
            e = self.c[kk].expand_as(t)
            for j in range(kk + 1, m):
                t = t - r[kk, j] * ths[j]
                e = e + r_hat[kk, j] * ys[j]
            y = _solve_monotone(t, r[kk, kk].expand_as(t), r_hat[kk, kk].expand_as(t), e)
            ys[kk] = y
            ths[kk] = torch.tanh(r_hat[kk, kk] * y + e)
        y = torch.stack(ys, dim=-1)
        th = torch.stack(ths, dim=-1)
        z = x - (th @ r.T) @ q.T
        diag = torch.diagonal(r) * torch.diagonal(r_hat)
        return z, -torch.log1p((1.0 - th * th) * diag).sum(-1)
