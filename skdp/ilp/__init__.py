"""Differentially private inductive logic programming (propositional form).

:class:`DPILPClassifier` (Lantz 2016 ch. 6; Zeng et al. 2014) and the lower bound
:func:`ilp_epsilon_lower_bound` of Theorem 6.5. numpy only.
"""

from __future__ import annotations

from skdp.ilp._classifier import DPILPClassifier
from skdp.mechanisms.sensitivity import ilp_epsilon_lower_bound

__all__ = ["DPILPClassifier", "ilp_epsilon_lower_bound"]
