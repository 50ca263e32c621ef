"""Base classes: the single flow convention shared by every transform.

Convention (:doc:`architecture`, "Flow direction"):

* ``forward(x) -> (z, log_abs_det)`` maps data to latent; ``log_abs_det`` is
  ``log|det dz/dx|`` with the input's leading (batch) shape.
* ``inverse(z) -> x`` maps latent to data.
* ``inverse_and_ladj(z) -> (x, log_abs_det)`` is the sampling direction together with its own
  log-determinant ``log|det dx/dz|`` (needed by reverse-KL training).

Every transform accepts inputs of shape ``(..., n_features)``: a batch ``(n, d)`` or a single row
``(d,)`` (the latter is what ``torch.func.vmap`` hands to a per-sample function).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["Transform", "Flow", "LogProbModule", "standard_normal_log_prob"]

_LOG_2PI = math.log(2.0 * math.pi)


def standard_normal_log_prob(z: torch.Tensor) -> torch.Tensor:
    """Log-density of the standard normal ``N(0, I_d)`` summed over the last axis.

    Parameters
    ----------
    z : torch.Tensor of shape (..., d)
        Points in latent space.

    Returns
    -------
    torch.Tensor of shape (...,)
        ``sum_i [-z_i**2 / 2 - log(2 pi) / 2]``.
    """
    return -0.5 * (z * z).sum(-1) - 0.5 * z.shape[-1] * _LOG_2PI


def _check_positive_int(value, name: str) -> int:
    """``value`` as an int, or ``ValueError`` naming ``name`` (``bool`` is refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def _check_n_features(n_features: int) -> int:
    return _check_positive_int(n_features, "n_features")


class Transform(nn.Module):
    """Abstract invertible transform following the data -> latent convention.

    Subclasses implement :meth:`forward` and :meth:`inverse_and_ladj`; :meth:`inverse` is
    derived from the latter.

    Parameters
    ----------
    n_features : int
        Dimension ``d`` of the (last axis of the) input.

    Attributes
    ----------
    n_features : int
        The dimension the transform acts on.
    """

    def __init__(self, n_features: int) -> None:
        super().__init__()
        self.n_features = _check_n_features(n_features)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover
        """Map data to latent: return ``(z, log|det dz/dx|)``."""
        raise NotImplementedError

    def inverse_and_ladj(
        self, z: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover
        """Map latent to data: return ``(x, log|det dx/dz|)``."""
        raise NotImplementedError

    def inverse(self, z: torch.Tensor) -> torch.Tensor:
        """Map latent to data: return ``x`` (see :meth:`inverse_and_ladj`)."""
        return self.inverse_and_ladj(z)[0]


def _compose(x: torch.Tensor, maps) -> tuple[torch.Tensor, torch.Tensor]:
    """Apply each ``map(x) -> (x, log|det|)`` in turn; the summed ``log|det|``."""
    ladj = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for f in maps:
        x, l = f(x)
        ladj = ladj + l
    return x, ladj


class Flow(Transform):
    """A composite normalizing flow: a sequence of transforms and a ``N(0, I)`` base.

    ``forward`` applies the transforms in order (data -> latent) and sums their
    log-determinants; ``inverse`` applies their inverses in reverse order.

    Parameters
    ----------
    transforms : sequence of Transform
        The transforms, in the data -> latent order. All must share ``n_features``.
    n_features : int, optional
        Dimension of the data. Required when ``transforms`` is empty (an identity flow whose
        density is the standard normal).

    Attributes
    ----------
    transforms : torch.nn.ModuleList
        The transforms in data -> latent order.
    n_features : int
        Data dimension.

    Notes
    -----
    The base distribution has no parameters; :meth:`log_prob` is
    ``log N(z; 0, I) + log|det dz/dx|``, computed inside one module call so that
    ``torch.func.functional_call`` (and hence ``vmap(grad(...))`` per-sample gradients) sees it.
    Nothing here mixes rows of a batch and nothing draws random numbers during ``forward``.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import Flow, Affine
    >>> flow = Flow([Affine(2), Affine(2)]).double()
    >>> x = torch.zeros(3, 2, dtype=torch.float64)
    >>> flow.log_prob(x).shape
    torch.Size([3])
    """

    def __init__(self, transforms=(), n_features: int | None = None) -> None:
        transforms = list(transforms)
        if n_features is None:
            if not transforms:
                raise ValueError("n_features is required when transforms is empty.")
            n_features = transforms[0].n_features
        super().__init__(n_features)
        for t in transforms:
            if not isinstance(t, Transform):
                raise TypeError(f"every transform must be a skdp.flows.Transform, got {type(t)}.")
            if t.n_features != self.n_features:
                raise ValueError(
                    f"transform {type(t).__name__} has n_features={t.n_features}, "
                    f"expected {self.n_features}."
                )
        self.transforms = nn.ModuleList(transforms)

    # -- transforms ------------------------------------------------------------------------
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Map data to latent.

        Parameters
        ----------
        x : torch.Tensor of shape (..., n_features)

        Returns
        -------
        z : torch.Tensor of shape (..., n_features)
        log_abs_det : torch.Tensor of shape (...,)
            ``log|det dz/dx|``.
        """
        return _compose(x, self.transforms)

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Map latent to data and return ``log|det dx/dz|`` (the sampling direction).

        Parameters
        ----------
        z : torch.Tensor of shape (..., n_features)

        Returns
        -------
        x : torch.Tensor of shape (..., n_features)
        log_abs_det : torch.Tensor of shape (...,)
        """
        return _compose(z, [t.inverse_and_ladj for t in reversed(self.transforms)])

    # -- densities -------------------------------------------------------------------------
    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Log-density of the flow at ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (..., n_features)

        Returns
        -------
        torch.Tensor of shape (...,)
            ``log N(z; 0, I) + log|det dz/dx|`` with ``z = forward(x)[0]``.
        """
        z, ladj = self.forward(x)
        return standard_normal_log_prob(z) + ladj

    def _reference_tensor(self) -> torch.Tensor | None:
        for p in self.parameters():
            return p
        for b in self.buffers():
            if b.is_floating_point():
                return b
        return None

    def _base_noise(
        self, n_samples: int, generator: torch.Generator | None, dtype, device
    ) -> torch.Tensor:
        if isinstance(n_samples, bool) or int(n_samples) != n_samples or n_samples < 0:
            raise ValueError(f"n_samples must be a non-negative integer, got {n_samples!r}.")
        ref = self._reference_tensor()
        if dtype is None:
            dtype = ref.dtype if ref is not None else torch.get_default_dtype()
        if device is None:
            device = ref.device if ref is not None else torch.device("cpu")
        return torch.randn(
            (int(n_samples), self.n_features), generator=generator, dtype=dtype, device=device
        )

    def sample(
        self,
        n_samples: int,
        generator: torch.Generator | None = None,
        *,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
    ) -> torch.Tensor:
        """Draw samples ``x = inverse(z)`` with ``z ~ N(0, I)``.

        Parameters
        ----------
        n_samples : int
            Number of samples (0 gives an empty ``(0, n_features)`` tensor).
        generator : torch.Generator, optional
            Source of the base noise; it must live on the module's device. ``None`` uses
            torch's default generator (not reproducible; estimators always pass one).
        dtype, device : optional
            Override the dtype/device of the base noise (default: those of the parameters).

        Returns
        -------
        torch.Tensor of shape (n_samples, n_features)
        """
        z = self._base_noise(n_samples, generator, dtype, device)
        return self.inverse(z)

    def sample_and_log_prob(
        self,
        n_samples: int,
        generator: torch.Generator | None = None,
        *,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Draw samples and their log-density along the sampling path.

        Returns
        -------
        x : torch.Tensor of shape (n_samples, n_features)
        log_prob : torch.Tensor of shape (n_samples,)
            ``log N(z; 0, I) - log|det dx/dz|``; equals ``log_prob(x)`` up to rounding.
        """
        z = self._base_noise(n_samples, generator, dtype, device)
        x, ladj = self.inverse_and_ladj(z)
        return x, standard_normal_log_prob(z) - ladj


class LogProbModule(nn.Module):
    """Wrap a :class:`Flow` so that the module call returns ``flow.log_prob(x)``.

    ``torch.func.functional_call(LogProbModule(flow), params, (x,))`` then computes the
    log-likelihood inside the module call, which is what per-sample gradients with
    ``torch.func.vmap(torch.func.grad(...))`` need. Parameter names are those of the flow
    prefixed with ``"flow."``.

    Parameters
    ----------
    flow : Flow
        The flow to wrap (not copied).

    Attributes
    ----------
    flow : Flow
        The wrapped flow.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import LogProbModule, make_flow
    >>> flow = make_flow("maf", 2, n_layers=1, hidden_features=(4,)).double()
    >>> module = LogProbModule(flow)
    >>> params = dict(module.named_parameters())
    >>> x = torch.zeros(5, 2, dtype=torch.float64)
    >>> torch.func.functional_call(module, params, (x,)).shape
    torch.Size([5])
    """

    def __init__(self, flow: Flow) -> None:
        super().__init__()
        if not hasattr(flow, "log_prob"):
            raise TypeError("flow must provide log_prob(x).")
        self.flow = flow

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``flow.log_prob(x)`` (shape ``x.shape[:-1]``)."""
        return self.flow.log_prob(x)
