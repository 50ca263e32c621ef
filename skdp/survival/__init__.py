"""Differentially private survival analysis (time-to-event data).

The target ``y`` follows scikit-survival: a structured array whose first field is the
event indicator (bool) and second the time (float); :func:`make_survival_target` builds
it without scikit-survival.
"""

from __future__ import annotations

from skdp.survival._competing import DPAalenJohansen, make_competing_risks_target
from skdp.survival._cox import DPCoxPH
from skdp.survival._kaplan_meier import DPKaplanMeier
from skdp.survival._logrank import DPLogrankResult, dp_logrank_test
from skdp.survival._target import check_survival_target, make_survival_target

__all__ = [
    "DPAalenJohansen",
    "DPCoxPH",
    "DPKaplanMeier",
    "DPLogrankResult",
    "check_survival_target",
    "dp_logrank_test",
    "make_competing_risks_target",
    "make_survival_target",
]
