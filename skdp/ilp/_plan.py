"""The release plan of :class:`~skdp.ilp.DPILPClassifier`.

Every public budget quantity of one ``fit``, computed once from the parameters and the
number of atoms before the data are read: the bottom clause, the epsilon of each round
and of each of its query batches (the smart search's levels, or the naive search's whole
lattice). The plan is the only source of ``privacy_breakdown_`` and ``epsilon_spent_``.
The noise scale of a smart-search level, ``alpha = epsilon_level / beta_i``, is not in the
plan: ``beta_i``, the number of clauses left at level ``i``, follows from the earlier
levels' noisy counts (post-processing of DP outputs), so the search derives it.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from skdp.utils._parts import part_keys

__all__ = ["ILPPlan", "plan_ilp", "resolve_bottom_clause"]


@dataclass(frozen=True, eq=False)
class ILPPlan:
    """Everything public about one ``fit`` of :class:`~skdp.ilp.DPILPClassifier`.

    ``n_rounds`` rounds (``n_clauses``) of ``round_epsilon = epsilon / n_rounds`` each;
    a round spends ``level_epsilon`` on each of its query batches ``levels``: the levels
    ``0..max_clause_length`` of the smart search, or the one batch ``"all"`` of the naive
    search. ``atoms``: the public bottom clause (column indices).
    ``max_rows_per_group``: the contribution bound ``k`` of a patient-level fit
    (``None`` per row); every batch's noise is then calibrated to ``k`` times the row's
    L1 sensitivity (the search passes it to
    :func:`~skdp.mechanisms.sensitivity.ilp_query_alpha`), the epsilons are unchanged.
    """

    epsilon: float
    n_atoms: int
    atoms: np.ndarray
    search: str
    max_clause_length: int
    min_pos: int
    n_rounds: int
    round_epsilon: float
    level_epsilon: float
    levels: tuple
    max_rows_per_group: int | None = None

    @property
    def epsilon_spent(self) -> float:
        """The fit's epsilon (pure DP; rounds and levels compose sequentially to it)."""
        return float(self.epsilon)

    @property
    def privacy_breakdown(self) -> dict[str, float]:
        """``{"round_r": round_epsilon}``, rounds numbered from 1, or ``{"round":
        round_epsilon}`` for one round (:func:`~skdp.utils._parts.part_keys`; each
        round's split over its ``levels`` is ``level_epsilon`` per batch)."""
        return dict.fromkeys(part_keys("round", self.n_rounds), float(self.round_epsilon))


def plan_ilp(est, n_atoms, max_rows_per_group=None) -> ILPPlan:
    """The plan of ``est.fit`` on rows of ``n_atoms`` atoms (reads only ``est``'s
    parameters, its ``feature_names_in_``, ``n_atoms`` and the contribution bound
    ``max_rows_per_group`` of a patient-level fit)."""
    epsilon, _ = est._check_privacy_params()
    ell = int(est.max_clause_length)
    round_epsilon = epsilon / est.n_clauses
    if est.search == "naive":
        level_epsilon, levels = round_epsilon, ("all",)
    else:
        level_epsilon, levels = round_epsilon / (ell + 1), tuple(range(ell + 1))
    return ILPPlan(
        epsilon=epsilon,
        n_atoms=int(n_atoms),
        atoms=resolve_bottom_clause(
            est.bottom_clause, n_atoms, getattr(est, "feature_names_in_", None)
        ),
        search=est.search,
        max_clause_length=ell,
        min_pos=est.min_pos,
        n_rounds=int(est.n_clauses),
        round_epsilon=round_epsilon,
        level_epsilon=level_epsilon,
        levels=levels,
        max_rows_per_group=max_rows_per_group,
    )


def resolve_bottom_clause(bottom_clause, n_atoms, names):
    """The bottom clause as sorted unique column indices (``None``: every atom);
    ``names``: the fitted column names that string entries refer to."""
    if bottom_clause is None:
        return np.arange(n_atoms)
    out = []
    for a in np.asarray(bottom_clause, dtype=object).ravel():
        if isinstance(a, str):
            if names is None or a not in set(names):
                raise ValueError(f"bottom_clause names unknown atom {a!r}")
            out.append(int(np.nonzero(names == a)[0][0]))
        elif isinstance(a, Integral | np.integer) and 0 <= int(a) < n_atoms:
            out.append(int(a))
        else:
            raise ValueError(
                f"bottom_clause entries must be column indices in [0, {n_atoms}) or column names"
            )
    return np.unique(np.array(out, dtype=np.intp))
