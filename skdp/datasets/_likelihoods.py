"""Per-record log-likelihoods of simulated models, as torch callables.

``log_lik(theta, X) -> (m, b)`` for parameter draws ``theta`` of shape ``(m, p)`` and records
``X`` of shape ``(b, d)`` (torch tensors), the form :class:`skdp.sampling.DPFlowVI` takes.
Plain tensor arithmetic, picklable; torch is imported only inside a call (``skdp.datasets``
stays importable without torch).
"""

from __future__ import annotations

import math

__all__ = ["GaussianLocationLogLik", "NonlinearRepeatedMeasuresLogLik"]

_LOG_2PI = math.log(2.0 * math.pi)


class GaussianLocationLogLik:
    """Per-record log-likelihood of the Gaussian location model ``x_i ~ N(theta, scale^2 I)``.

    The default ``log_lik`` of :class:`skdp.sampling.DPFlowVI` (then ``theta`` has the
    dimension of a record). A picklable callable: ``log_lik(theta, X) -> (m, b)`` with
    ``theta`` of shape ``(m, d)`` and ``X`` of shape ``(b, d)``.

    Parameters
    ----------
    scale : float, default=1.0
        Known (public) noise standard deviation.

    Examples
    --------
    >>> import torch
    >>> from skdp.datasets import GaussianLocationLogLik
    >>> ll = GaussianLocationLogLik()(torch.zeros(3, 2), torch.zeros(4, 2))
    >>> tuple(ll.shape)
    (3, 4)
    """

    def __init__(self, scale=1.0):
        scale = float(scale)
        if not (0 < scale < math.inf):
            raise ValueError("scale must be a positive finite number")
        self.scale = scale

    def __call__(self, theta, X):
        r = (X[None, :, :] - theta[:, None, :]) / self.scale
        d = X.shape[-1]
        return -0.5 * (r * r).sum(-1) - d * (math.log(self.scale) + 0.5 * _LOG_2PI)

    def __repr__(self):
        return f"GaussianLocationLogLik(scale={self.scale!r})"


class NonlinearRepeatedMeasuresLogLik:
    """Per-subject log-likelihood of the simulated nonlinear model (Su et al. 2023, §4.2).

    ``log N_5(x_i; f(w_i, beta) 1, sigma^2 I + sigma0^2 1 1^T)`` with
    ``f(w, beta) = beta0 + exp(beta1 w1) + log(w2 + exp(beta2)) + beta3 exp(w3)
    + log(w4 + exp(beta4))`` (paper Eq. (12) with its typo fixed). Records are
    ``[w1..w4, x1..x5]`` as made by :func:`make_nonlinear_repeated_measures`;
    ``sigma`` and ``sigma0`` are known constants (never estimated from the data, H12).
    The torch twin of :func:`nonlinear_log_likelihood`.

    Parameters
    ----------
    sigma, sigma0 : float, default=0.2

    Examples
    --------
    >>> import torch
    >>> from skdp.datasets import NonlinearRepeatedMeasuresLogLik
    >>> ll = NonlinearRepeatedMeasuresLogLik()(torch.zeros(2, 5), torch.ones(3, 9))
    >>> tuple(ll.shape)
    (2, 3)
    """

    def __init__(self, sigma=0.2, sigma0=0.2):
        self.sigma = float(sigma)
        self.sigma0 = float(sigma0)

    def __call__(self, theta, X):
        import torch

        w1, w2, w3, w4 = (X[None, :, j] for j in range(4))
        b = [theta[:, j, None] for j in range(5)]
        f = (
            b[0]
            + torch.exp(b[1] * w1)
            + torch.log(w2 + torch.exp(b[2]))
            + b[3] * torch.exp(w3)
            + torch.log(w4 + torch.exp(b[4]))
        )  # (m, b)
        r = X[None, :, 4:9] - f[..., None]
        s2, t2, k = self.sigma**2, self.sigma0**2, 5
        quad = ((r * r).sum(-1) - t2 / (s2 + k * t2) * r.sum(-1) ** 2) / s2
        logdet = k * math.log(s2) + math.log1p(k * t2 / s2)
        return -0.5 * (quad + logdet + k * _LOG_2PI)

    def __repr__(self):
        return f"NonlinearRepeatedMeasuresLogLik(sigma={self.sigma!r}, sigma0={self.sigma0!r})"
