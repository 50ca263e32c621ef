"""Normalizing flows in torch (no privacy concepts).

One convention everywhere (:doc:`architecture`, "Flow direction"): ``forward(x) -> (z,
log_abs_det)`` maps data to latent, ``inverse(z) -> x`` maps latent to data, and
``inverse_and_ladj(z) -> (x, log_abs_det)`` gives the sampling direction's log-determinant.
Composite flows provide ``log_prob(x)``, ``sample(n, generator)`` and ``sample_and_log_prob``;
:class:`LogProbModule` makes ``log_prob`` the module call for ``torch.func.functional_call``.

No BatchNorm / ActNorm / data-dependent initialisation anywhere, and no layer mixes the rows of
a batch, so everything is usable under DP-SGD per-sample gradients (``vmap(grad(...))``).

:class:`CholeskyAffine` (full-covariance affine) and :class:`BoxSigmoid` (onto a box) are the
constrained transforms of the reverse-KL samplers in :mod:`skdp.variational`.
"""

from skdp.flows._base import Flow, LogProbModule, Transform, standard_normal_log_prob
from skdp.flows._constrained import BoxSigmoid, CholeskyAffine
from skdp.flows._elementwise import Affine, InverseTransform, Permutation
from skdp.flows._factory import make_flow, planar_flow, sylvester_flow
from skdp.flows._made import MADE, MaskedLinear
from skdp.flows._maf import IAF, MAF, MAFLayer, soft_clamp
from skdp.flows._planar import Planar, Sylvester
from skdp.flows._realnvp import AffineCoupling, RealNVP

__all__ = [
    "MADE",
    "MAF",
    "Affine",
    "AffineCoupling",
    "BoxSigmoid",
    "CholeskyAffine",
    "Flow",
    "IAF",
    "InverseTransform",
    "LogProbModule",
    "MAFLayer",
    "MaskedLinear",
    "Permutation",
    "Planar",
    "RealNVP",
    "Sylvester",
    "Transform",
    "make_flow",
    "planar_flow",
    "soft_clamp",
    "standard_normal_log_prob",
    "sylvester_flow",
]
