"""The release plan of :class:`~skdp.synthesis.DPHistogramSynthesizer`: every share of
the budget, the sensitivity, the noise and the filter threshold of one fit, computed once
from public inputs.

The plan is built after the bounds are resolved (their budget is a public fraction of
``epsilon``) and before any count of the rows is released, from the budget, the
projections (column names of the public schema), the public row count and the
parameters. It is the only source of ``privacy_breakdown_``, ``epsilon_spent_`` and
``noise_scale_``; the noisy cells (:func:`skdp.synthesis._histogram_cells.noisy_cells`)
read their noise and threshold from it and recompute nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from skdp.mechanisms._discrete import quantize_floor
from skdp.mechanisms.sensitivity import histogram_sensitivity
from skdp.synthesis._histogram_cells import _SECURE_LAPLACE_GRID, noise_mass
from skdp.utils._parts import part_keys

__all__ = ["HistogramPlan", "part_names"]


def part_names(n_histograms):
    """The ``privacy_breakdown_`` key of each histogram, in projection order:
    ``["histogram"]`` for one, ``["histogram_1", ..., "histogram_g"]`` for ``g > 1``."""
    return part_keys("histogram", n_histograms)


@dataclass(frozen=True)
class HistogramPlan:
    """Budget, noise and threshold of one :class:`DPHistogramSynthesizer` fit.

    Attributes
    ----------
    epsilon : float
        The total budget of the fit (``inf``: no noise, no filtering).
    eps_bounds : float
        What the private bound estimate spent (0 when every bound was declared).
    groups : tuple of tuple
        The columns of each histogram (the projections, in order).
    uniform : tuple
        The columns drawn uniformly (in no projection).
    n_public : int
        The public row count of the bin rule and of the threshold (``n_public``, or
        ``len(X)`` with the row count public).
    mechanism : {"geometric", "laplace"}
        The noise of the cells.
    secure_mode : bool
        The exact discrete sampler (also for ``"laplace"``) on ``os.urandom``.
    sensitivity : float
        The L1 sensitivity of one histogram: 1 per row (a row falls in one cell), ``k``
        per patient (``max_rows_per_group=k``: the patient's at most ``k`` rows change
        the counts by ``k`` in all; :func:`histogram_sensitivity`). Multiplied here,
        once: the noise scale and the threshold are in units of it.
    eps_group : float
        ``epsilon_g``, each histogram's share: ``(epsilon - eps_bounds) / g``.
    threshold : float
        ``tau = A log(n_public) sensitivity / epsilon_g`` (0 at ``epsilon = inf``): the
        thesis's ``A log(n) / epsilon_g`` in units of the noise scale.
    grid : Fraction or None
        The lattice step of an exact release (1 for ``"geometric"``, ``2**-10`` for
        ``"laplace"`` with ``secure_mode``); ``None`` for floating-point Laplace noise.
    alpha : Fraction or None
        The exact discrete Laplace parameter per lattice step,
        ``epsilon_g * grid / sensitivity`` rounded down to 20 significant bits
        (:func:`skdp.mechanisms._discrete.quantize_floor`): the pmf of ``Z`` is
        proportional to ``exp(-alpha |Z|)``; ``None`` without an exact release.
    noise_scale : float
        The scale ``b`` of each cell's noise in counts (pmf or density proportional to
        ``exp(-|x| / b)``): ``grid / alpha`` for an exact release (``1 / epsilon_g``
        up to the rounding of ``alpha``), ``sensitivity / epsilon_g`` for
        floating-point Laplace noise; 0 at ``epsilon = inf``.
    max_rows_per_group : int or None
        ``k`` of a patient-level fit (``groups``); ``None`` per row.
    """

    epsilon: float
    eps_bounds: float
    groups: tuple
    uniform: tuple
    n_public: int
    mechanism: str
    secure_mode: bool
    sensitivity: float
    eps_group: float
    threshold: float
    grid: Fraction | None
    alpha: Fraction | None
    noise_scale: float
    max_rows_per_group: int | None = None

    @classmethod
    def build(
        cls,
        *,
        epsilon,
        eps_bounds,
        groups,
        uniform,
        n_public,
        threshold,
        mechanism,
        secure_mode,
        max_rows_per_group=None,
    ):
        """The plan of a fit from public inputs only: the budget, the bounds' share, the
        projections, the public row count, the parameters (``threshold`` is ``A``) and
        the contribution bound ``k`` of a patient-level fit."""
        groups = tuple(tuple(g) for g in groups)
        sens = histogram_sensitivity(max_rows_per_group=max_rows_per_group)
        eps_g = (epsilon - float(eps_bounds)) / len(groups)
        finite = math.isfinite(eps_g)
        # (x * 1.0 is x: the row-level threshold is bit-identical)
        tau = threshold * math.log(max(n_public, 1)) * sens / eps_g if finite else 0.0
        grid = alpha = None
        if not finite:
            scale = 0.0
        elif mechanism == "geometric" or secure_mode:
            grid = Fraction(1) if mechanism == "geometric" else _SECURE_LAPLACE_GRID
            alpha = quantize_floor(Fraction(eps_g) * grid / Fraction(sens))
            scale = float(grid / alpha)
        else:
            scale = sens / eps_g
        return cls(
            epsilon=epsilon,
            eps_bounds=float(eps_bounds),
            groups=groups,
            uniform=tuple(uniform),
            n_public=int(n_public),
            mechanism=mechanism,
            secure_mode=bool(secure_mode),
            sensitivity=sens,
            eps_group=eps_g,
            threshold=tau,
            grid=grid,
            alpha=alpha,
            noise_scale=scale,
            max_rows_per_group=max_rows_per_group,
        )

    @property
    def exact(self):
        """Whether the cells get exact lattice noise (an integer count of ``grid`` steps)."""
        return self.grid is not None

    @property
    def parts(self):
        """The ``privacy_breakdown_`` key of each histogram (:func:`part_names`)."""
        return part_names(len(self.groups))

    @property
    def epsilon_spent(self):
        """The fit's epsilon (pure DP: the histograms compose sequentially to it)."""
        return float(self.epsilon)

    def breakdown(self):
        """``privacy_breakdown_``: ``"bounds"``, then each histogram's ``epsilon_g``
        (keys :attr:`parts`); sums to ``epsilon``."""
        out = {"bounds": float(self.eps_bounds)}
        out.update({part: float(self.eps_group) for part in self.parts})
        return out

    def noise_scales(self):
        """``noise_scale_``: each histogram's :attr:`noise_scale`, keyed as in
        :meth:`breakdown` (the bound estimate's noise is
        :func:`skdp.mechanisms.resolve_bounds`'s own)."""
        return {part: float(self.noise_scale) for part in self.parts}

    def noise_mass(self, n_cells):
        """Expected noise-only mass of ``n_cells`` empty cells of one histogram
        (:func:`skdp.synthesis._histogram_cells.noise_mass`, public)."""
        return noise_mass(
            n_cells,
            self.eps_group / self.sensitivity,  # per count: the noise is sens / eps_g
            self.threshold,
            mechanism=self.mechanism,
            secure_mode=self.secure_mode,
        )
