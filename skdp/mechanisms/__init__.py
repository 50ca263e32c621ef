"""Differential-privacy mechanisms (numpy only, vectorised, explicit Generators).

* additive noise: :func:`laplace_noise` / :func:`add_laplace`, :func:`gaussian_sigma` /
  :func:`add_gaussian`, :func:`two_sided_geometric` / :func:`add_geometric`,
  exact integer noise :func:`discrete_laplace_noise` / :func:`discrete_gaussian_noise`
  (integer arithmetic only, immune to floating-point attacks; ``secure_mode=True`` draws
  from the OS's cryptographically secure generator),
  :func:`smooth_sensitivity_noise` (density ∝ 1/(1+|z|^γ));
* selection: :func:`exponential_mechanism` (log space, Gumbel-max),
  :func:`subsampled_exponential_mechanism`, :func:`report_noisy_max`;
* private bounds: :func:`private_quantile`, :func:`private_grid_quantile`, :func:`private_bounds`,
  :func:`resolve_bounds`;
* :mod:`skdp.mechanisms.sensitivity`: every sensitivity formula, once.

Every function takes ``rng`` (a :class:`numpy.random.Generator`) as a keyword; none
uses a global random state (the noise functions with ``secure_mode=True`` read
``os.urandom`` instead). ``epsilon`` is always the total guarantee of the call.
"""

from skdp.mechanisms import sensitivity
from skdp.mechanisms._bounds import (
    bounds_estimate_unreliable,
    private_bounds,
    resolve_bounds,
    resolve_schema_bounds,
)
from skdp.mechanisms._discrete import discrete_gaussian_noise, discrete_laplace_noise
from skdp.mechanisms._exponential import (
    exponential_mechanism,
    exponential_mechanism_log_probs,
    report_noisy_max,
    subsampled_exponential_mechanism,
)
from skdp.mechanisms._noise import (
    add_gaussian,
    add_geometric,
    add_laplace,
    gaussian_delta,
    gaussian_sigma,
    laplace_noise,
    smooth_sensitivity_beta,
    smooth_sensitivity_logpdf,
    smooth_sensitivity_noise,
    smooth_sensitivity_scale,
    two_sided_geometric,
)
from skdp.mechanisms._quantiles import (
    above_threshold_bound,
    grid_quantile_utilities,
    integer_grid_candidates,
    log_grid_candidates,
    private_grid_quantile,
    private_quantile,
    private_quantile_log_probs,
)

__all__ = [
    "above_threshold_bound",
    "bounds_estimate_unreliable",
    "add_gaussian",
    "add_geometric",
    "add_laplace",
    "discrete_gaussian_noise",
    "discrete_laplace_noise",
    "exponential_mechanism",
    "exponential_mechanism_log_probs",
    "gaussian_delta",
    "gaussian_sigma",
    "grid_quantile_utilities",
    "laplace_noise",
    "integer_grid_candidates",
    "log_grid_candidates",
    "private_bounds",
    "private_grid_quantile",
    "private_quantile",
    "private_quantile_log_probs",
    "report_noisy_max",
    "resolve_bounds",
    "resolve_schema_bounds",
    "sensitivity",
    "smooth_sensitivity_beta",
    "smooth_sensitivity_logpdf",
    "smooth_sensitivity_noise",
    "smooth_sensitivity_scale",
    "subsampled_exponential_mechanism",
    "two_sided_geometric",
]
