"""Simulated data sets (layer 0; nothing is downloaded, torch is never imported here).

* :func:`make_longitudinal_ehr`: patients with a variable number of visits (rows), drifting
  covariates and an outcome, with the patient id of each row (``groups``);
* :func:`make_interaction_table`: a mixed table whose label depends on a 3- or 4-way
  interaction that no smaller marginal carries (:func:`interaction_table_schema`: its
  public bounds, categories and kinds);
* :func:`make_nonlinear_repeated_measures`: the simulated nonlinear repeated-measures model of
  Su et al. (2023, §4.2), with the Eq. (12) typo fixed;
* :func:`nonlinear_regression_function` and :func:`nonlinear_log_likelihood`: its regression
  function and per-subject Gaussian log-likelihood (numpy reference implementations);
* :class:`NonlinearRepeatedMeasuresLogLik` and :class:`GaussianLocationLogLik`: torch
  per-record log-likelihoods ``log_lik(theta, X)`` for :class:`skdp.sampling.DPFlowVI`
  (torch is imported inside a call only).
"""

from skdp.datasets._interaction import interaction_table_schema, make_interaction_table
from skdp.datasets._likelihoods import GaussianLocationLogLik, NonlinearRepeatedMeasuresLogLik
from skdp.datasets._simulators import (
    LONGITUDINAL_EHR_BOUNDS,
    NONLINEAR_BETA_TRUE,
    NONLINEAR_W_UPPER,
    make_longitudinal_ehr,
    make_nonlinear_repeated_measures,
    nonlinear_log_likelihood,
    nonlinear_regression_function,
)

__all__ = [
    "GaussianLocationLogLik",
    "LONGITUDINAL_EHR_BOUNDS",
    "NonlinearRepeatedMeasuresLogLik",
    "NONLINEAR_BETA_TRUE",
    "NONLINEAR_W_UPPER",
    "interaction_table_schema",
    "make_interaction_table",
    "make_longitudinal_ehr",
    "make_nonlinear_repeated_measures",
    "nonlinear_log_likelihood",
    "nonlinear_regression_function",
]
