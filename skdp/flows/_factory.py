"""Factory for the composite flows."""

from __future__ import annotations

from skdp.flows._base import Flow
from skdp.flows._maf import MAF
from skdp.flows._realnvp import RealNVP

__all__ = ["make_flow"]

_KINDS = {"maf": MAF, "realnvp": RealNVP}


def make_flow(kind: str, n_features: int, **kwargs) -> Flow:
    """Build a composite flow by name.

    Parameters
    ----------
    kind : {"maf", "realnvp"}
        Flow family (case-insensitive).
    n_features : int
        Data dimension.
    **kwargs
        Passed to :class:`skdp.flows.MAF` or :class:`skdp.flows.RealNVP`
        (``n_layers``, ``hidden_features``, ``activation``, ``alpha_clamp``, ``normalization``,
        ``generator``, ``zero_init_output``, and ``order`` for the MAF).

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
