"""Pipelines whose privacy spend is the composition of their steps'.

:class:`DPPipeline` (and :func:`make_dp_pipeline`) is a scikit-learn
:class:`~sklearn.pipeline.Pipeline` that reports ``epsilon_spent_``, ``delta_spent_``
and ``privacy_guarantee_`` for the whole chain and refuses a step that learns from the
rows without a guarantee. :func:`check_pipeline_privacy` gives the same verdict, step
by step, for any estimator or nesting of ``Pipeline``, ``ColumnTransformer`` and
``FeatureUnion``. Layer 5: imports estimator packages, is imported by none.
"""

from __future__ import annotations

from skdp.pipeline._check import PipelinePrivacyReport, StepPrivacy, check_pipeline_privacy
from skdp.pipeline._pipeline import DPPipeline, make_dp_pipeline

__all__ = [
    "DPPipeline",
    "PipelinePrivacyReport",
    "StepPrivacy",
    "check_pipeline_privacy",
    "make_dp_pipeline",
]
