"""The parameter constraints shared by every estimator that takes a table.

Every estimator with the tabular front end (``skdp.mechanisms._front_end.TabularFrontEnd``:
:class:`~skdp.density.DPFlowDensity`, :class:`~skdp.synthesis.DPGANSynthesizer`,
:class:`~skdp.synthesis.DPHistogramSynthesizer`,
:class:`~skdp.synthesis.DPMarginalSynthesizer`) takes the table's public metadata as the
same parameters with the same accepted values: ``bounds``, ``categories``,
``column_types`` and ``schema``, and, where it models missing cells, ``missing``. They
merge this one block into their ``_parameter_constraints``, as scikit-learn merges a base
class's constraints (``{**BaseForest._parameter_constraints, ...}``)::

    _parameter_constraints = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        **tabular_constraints(missing=True),
        ...
    }
"""

from __future__ import annotations

import numpy as np

from skdp.utils._sklearn_compat import StrOptions
from skdp.utils._tabular.schema import TabularSchema

__all__ = ["bounds_constraint", "tabular_constraints", "tabular_params"]


def bounds_constraint():
    """The constraint of a table's ``bounds``: ``None`` (a private estimate, refused when
    it cannot be reliable), ``"private"`` (the opt-in to it), ``"data"`` (read off the
    data, not private), a ``(low, high)`` pair of scalars or per-column arrays, or a dict
    ``{column: (low, high)}``."""
    return [None, StrOptions({"data", "private"}), tuple, list, dict, np.ndarray]


def tabular_constraints(*, missing=False):
    """``{name: constraint}`` of the table metadata parameters (fresh lists).

    Parameters
    ----------
    missing : bool, default=False
        Include ``missing`` (``"error"`` or ``"category"``), for the estimators that
        model missing cells.
    """
    out = {
        "bounds": bounds_constraint(),
        "categories": [None, StrOptions({"data"}), dict, list],
        "column_types": [None, StrOptions({"data"}), dict, list],
        "schema": [None, TabularSchema, dict],
    }
    if missing:
        out["missing"] = [StrOptions({"error", "category"})]
    return out


def tabular_params(*, missing=False):
    """``[(name, default), ...]`` of the same parameters, in signature order: the
    entries of a :func:`skdp.utils._keyword_init.keyword_init` parameter table
    (``bounds``, ``categories``, ``column_types``, ``schema`` default to ``None``;
    ``missing``, with ``missing=True``, to ``"error"``)."""
    out = [(name, None) for name in ("bounds", "categories", "column_types", "schema")]
    return out + [("missing", "error")] if missing else out
