"""Factory for the composite flows."""

from __future__ import annotations

import torch

from skdp.flows._base import Flow, _check_positive_int
from skdp.flows._maf import IAF, MAF
from skdp.flows._planar import Planar, Sylvester
from skdp.flows._realnvp import RealNVP

__all__ = ["make_flow", "planar_flow", "sylvester_flow"]


def _check_layers(n_layers) -> int:
    return _check_positive_int(n_layers, "n_layers")


def planar_flow(
    n_features: int, n_layers: int = 5, *, generator: torch.Generator | None = None
) -> Flow:
    """A :class:`Flow` of ``n_layers`` :class:`skdp.flows.Planar` layers.

    Its closed-form direction (``z -> x``) is ``inverse`` / ``inverse_and_ladj`` /
    ``sample_and_log_prob``; ``forward`` and ``log_prob`` solve for ``z`` numerically.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import planar_flow
    >>> flow = planar_flow(2, 3, generator=torch.Generator().manual_seed(0)).double()
    >>> x, lp = flow.sample_and_log_prob(4, generator=torch.Generator().manual_seed(1))
    >>> torch.allclose(lp, flow.log_prob(x))
    True
    """
    n_layers = _check_layers(n_layers)
    return Flow([Planar(n_features, generator=generator) for _ in range(n_layers)])


def sylvester_flow(
    n_features: int,
    n_layers: int = 5,
    n_components: int | None = None,
    n_householder: int | None = None,
    *,
    generator: torch.Generator | None = None,
) -> Flow:
    """A :class:`Flow` of ``n_layers`` orthogonal :class:`skdp.flows.Sylvester` layers.

    Same direction conventions as :func:`planar_flow`.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import sylvester_flow
    >>> flow = sylvester_flow(3, 2, n_components=2, generator=torch.Generator().manual_seed(0))
    >>> flow.sample(5, generator=torch.Generator().manual_seed(1)).shape
    torch.Size([5, 3])
    """
    n_layers = _check_layers(n_layers)
    return Flow(
        [
            Sylvester(n_features, n_components, n_householder, generator=generator)
            for _ in range(n_layers)
        ]
    )


_KINDS = {
    "maf": MAF,
    "iaf": IAF,
    "realnvp": RealNVP,
    "planar": planar_flow,
    "sylvester": sylvester_flow,
}


def make_flow(kind: str, n_features: int, **kwargs) -> Flow:
    """Build a composite flow by name.

    Parameters
    ----------
    kind : {"maf", "realnvp", "iaf", "planar", "sylvester"}
        Flow family (case-insensitive). ``"planar"``/``"sylvester"`` are defined in the sampling
        direction (closed-form ``inverse``; numerical ``forward``), see :func:`planar_flow`.
    n_features : int
        Data dimension.
    **kwargs
        Passed to :class:`skdp.flows.MAF` or :class:`skdp.flows.RealNVP`
        (``n_layers``, ``hidden_features``, ``activation``, ``alpha_clamp``, ``normalization``,
        ``generator``, ``zero_init_output``, and ``order`` for the MAF/IAF), or to
        :func:`planar_flow` / :func:`sylvester_flow`.

    Returns
    -------
    Flow
        Created in torch's default dtype on the CPU; call ``.to(dtype=..., device=...)``.

    Examples
    --------
    >>> from skdp.flows import make_flow
    >>> make_flow("realnvp", 2, n_layers=2, hidden_features=(8,)).n_features
    2
    """
    if not isinstance(kind, str) or kind.lower() not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, got {kind!r}.")
    return _KINDS[kind.lower()](n_features, **kwargs)
