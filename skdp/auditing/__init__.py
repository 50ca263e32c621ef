"""Empirical privacy auditing: membership inference, one-run audits, reconstruction attacks.

Every audit returns an :class:`AuditResult` with the attack's ROC, AUC and TPR at low
FPR, and an empirical epsilon **lower bound at a stated confidence** (Clopper--Pearson
for independent trials, the exact binomial test of Steinke et al. 2023 for one-run
audits), never a point estimate dressed as a bound.

* :func:`distinguishing_audit` -- many fits on a fixed neighbouring pair; the tightest
  check of an implementation (catches a missing noise term).
* :func:`group_audit` -- the same with one *patient* (all their rows) in or out: the
  audit of a ``groups=`` (patient-level) guarantee.
* :func:`threshold_audit` -- the same bound from scores you computed yourself
  (white-box audits, e.g. of one DP-SGD step).
* :func:`one_run_audit` / :func:`loss_threshold_attack` -- one fit, many canaries.
* :func:`lira_attack` -- likelihood-ratio attack with shadow models (online/offline).
* :class:`ModelInversionAttack`, :class:`DeidentifiedDataAttack` -- attribute
  inference from a released linear model / released (synthetic) data (Lantz 2016, §5.3).
* :func:`auc_reidentification_attack` -- class of a missing row from a released AUC
  (Lantz 2016, §7.3.1).
* Controls with known epsilon: :class:`RandomizedResponseRelease`,
  :class:`LaplaceCountRelease`; non-private memorising controls
  :class:`MemorizingDensity`, :class:`MemorizingClassifier`.

:func:`check_privacy` runs the default audit on a user's
estimator configuration and fails if the bound exceeds the claimed epsilon.

Layering: L4; imports L0--L3 only (attack ROC/AUC from scikit-learn). No torch.
"""

from skdp.auditing._attacks import lira_attack, loss_threshold_attack
from skdp.auditing._audits import (
    distinguishing_audit,
    one_run_audit,
    threshold_audit,
)
from skdp.auditing._bounds import (
    clopper_pearson,
    epsilon_from_rates,
    epsilon_lower_bound,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)
from skdp.auditing._checks import check_privacy
from skdp.auditing._controls import (
    LaplaceCountRelease,
    MemorizingClassifier,
    MemorizingDensity,
    RandomizedResponseRelease,
)
from skdp.auditing._group_audit import group_audit
from skdp.auditing._inversion import (
    DeidentifiedDataAttack,
    ModelInversionAttack,
    attribute_inference_scores,
)
from skdp.auditing._reidentification import (
    auc_reidentification_attack,
    auc_reidentification_audit,
)
from skdp.auditing._result import AuditResult, roc_summary
from skdp.auditing._scoring import membership_scores

__all__ = [
    "AuditResult",
    "DeidentifiedDataAttack",
    "ModelInversionAttack",
    "attribute_inference_scores",
    "auc_reidentification_attack",
    "auc_reidentification_audit",
    "LaplaceCountRelease",
    "MemorizingClassifier",
    "MemorizingDensity",
    "RandomizedResponseRelease",
    "check_privacy",
    "clopper_pearson",
    "distinguishing_audit",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "group_audit",
    "lira_attack",
    "loss_threshold_attack",
    "membership_scores",
    "one_run_audit",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
    "roc_summary",
    "threshold_audit",
]
