"""skdp: differentially private estimators for sensitive tabular data.

Importing :mod:`skdp` is cheap: it imports neither torch nor scikit-learn. Public
estimators are importable from their subpackage (``from skdp.density import
DPFlowDensity``) and lazily from the top level (``from skdp import DPFlowDensity``),
which imports the subpackage (and torch, where it needs it) only then.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0.dev0"

# Public name -> subpackage that defines it. Resolved lazily by ``__getattr__``.
_LAZY = {
    # L1/L2 building blocks
    "PrivacyLedger": "skdp.accounting",
    "compute_epsilon": "skdp.accounting",
    "calibrate_noise_multiplier": "skdp.accounting",
    # estimators
    "DPLinearRegression": "skdp.linear_model",
    "DPLogisticRegression": "skdp.linear_model",
    "ExpMFlowRegressor": "skdp.linear_model",
    "ExpMFlowClassifier": "skdp.linear_model",
    "DPHistogramSynthesizer": "skdp.synthesis",
    "DPMarginalSynthesizer": "skdp.synthesis",
    "DPGANSynthesizer": "skdp.synthesis",
    "DPFlowDensity": "skdp.density",
    "DPFlowVI": "skdp.sampling",
    "DPILPClassifier": "skdp.ilp",
    "SubsampledExpMedian": "skdp.cluster",
    # survival analysis
    "DPKaplanMeier": "skdp.survival",
    "DPAalenJohansen": "skdp.survival",
    "DPCoxPH": "skdp.survival",
    "dp_logrank_test": "skdp.survival",
    "make_survival_target": "skdp.survival",
    # preprocessing
    "PublicBoundsScaler": "skdp.preprocessing",
    "PublicOneHotEncoder": "skdp.preprocessing",
    "DPStandardScaler": "skdp.preprocessing",
    "DPSimpleImputer": "skdp.preprocessing",
    # pipelines and model selection (L5)
    "DPPipeline": "skdp.pipeline",
    "make_dp_pipeline": "skdp.pipeline",
    "check_pipeline_privacy": "skdp.pipeline",
    "DPGridSearchCV": "skdp.model_selection",
    "dp_cross_validate": "skdp.model_selection",
    # scorers
    "dp_roc_auc_score": "skdp.metrics",
    "dp_average_precision_score": "skdp.metrics",
    "dp_accuracy_score": "skdp.metrics",
    "make_dp_scorer": "skdp.metrics",
    "cv_privacy_spend": "skdp.metrics",
    "binormal_roc_curve": "skdp.metrics",
}

_SUBPACKAGES = (
    "accounting",
    "auditing",
    "base",
    "cluster",
    "datasets",
    "density",
    "exceptions",
    "flows",
    "ilp",
    "linear_model",
    "mechanisms",
    "metrics",
    "model_selection",
    "pipeline",
    "preprocessing",
    "sampling",
    "survival",
    "synthesis",
    "training",
    "utils",
    "variational",
)

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        try:
            value = getattr(module, name)
        except AttributeError:  # pragma: no cover - planned but not yet implemented
            raise AttributeError(
                f"skdp.{name} is planned but not implemented yet in {_LAZY[name]}"
            ) from None
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        module = importlib.import_module(f"skdp.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'skdp' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBPACKAGES))
