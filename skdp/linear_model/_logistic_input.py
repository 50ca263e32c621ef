"""Input checks of :class:`DPLogisticRegression`: the declared classes, the feature
bounds (declared, privately estimated or the non-private opt-in) and the patient-level
``groups``; each a function of the estimator and its input."""

from __future__ import annotations

import warnings

import numpy as np

from skdp.exceptions import PrivacyLeakWarning
from skdp.mechanisms import resolve_bounds
from skdp.utils._groups import patient_codes

__all__ = ["check_patient_groups", "resolve_classes", "resolve_feature_bounds"]


def check_patient_groups(est, groups, n):
    """``(codes, k)`` of a patient-level fit (objective perturbation or per-patient
    DP-SGD): declared bounds."""
    return patient_codes(est, groups, n, estimated=("bounds_X",))


def resolve_feature_bounds(est, X, epsilon, rng):
    """``(lo, hi, epsilon_used)`` of ``bounds_X``; with ``clip=False`` a value outside
    the declared bounds is refused, naming its column."""
    columns = list(getattr(est, "feature_names_in_", range(X.shape[1])))
    lo, hi, eps_bounds = resolve_bounds(
        est.bounds_X, X, epsilon=epsilon, rng=rng, name="bounds_X", columns=columns
    )
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    if not est.clip:
        out = np.any((X < lo) | (X > hi), axis=0)
        if out.any():
            labels = ", ".join(repr(columns[j]) for j in np.nonzero(out)[0])
            raise ValueError(
                f"values outside the declared bounds in column(s) {labels}; pass "
                "clip=True to clip them"
            )
    return lo, hi, eps_bounds


def resolve_classes(est, y):
    if est.classes is None:
        # the label set is public metadata: reading it off y would release which
        # labels occur in the private rows
        raise ValueError(
            "DPLogisticRegression needs the public label set: pass classes=[...] "
            "(or classes='data' to read the classes off y, which is not private)"
        )
    if isinstance(est.classes, str):  # "data": the explicit, non-private opt-in
        warnings.warn(
            "classes='data' reads the label set off y: it is released without "
            "differential privacy and the fit is recorded as non-private. Declare "
            "classes=[...] instead.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
        classes = np.unique(y)
        if classes.shape[0] < 2:
            raise ValueError(
                "With classes='data', y must hold at least two classes (not one class); "
                "pass classes=[...] to declare them"
            )
        return classes
    classes = np.asarray(est.classes)
    if classes.ndim != 1 or classes.shape[0] < 2:
        raise ValueError("classes must hold at least two labels")
    if np.unique(classes).shape[0] != classes.shape[0]:
        raise ValueError("classes must hold distinct labels")
    if not np.isin(y, classes).all():
        raise ValueError("y contains labels that are not in classes")
    return classes
