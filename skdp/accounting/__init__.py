"""Privacy accounting: RDP / PLD / GDP maths, composition, calibration and a user-held ledger.

Pure numpy/scipy (layer L1; never imports torch).

* :func:`compute_epsilon` and :func:`calibrate_noise_multiplier`: epsilon of, and the
  noise for, ``steps`` Poisson-subsampled Gaussian (DP-SGD) steps.
* :func:`resolve_noise_multiplier`: the DP-SGD estimators' shared rule (calibrate, or
  check a user-fixed noise multiplier against the budget before training).
* :func:`get_accountant`: stateful accountants by registry key -- ``"rdp"`` (exact;
  the default of the pure functions), ``"pld"`` (exact and tighter: numerical
  composition of privacy loss distributions, reported as ``min(PLD, RDP)``; the
  default of the DP-SGD estimators) and ``"gdp_clt"`` (the DP-NF paper's
  central-limit formula; approximate, warns).
* :func:`rdp_subsampled_gaussian`, :func:`rdp_to_epsilon`, ... : the RDP building
  blocks (exact integer *and* fractional orders, improved or classic conversion).
* :func:`compose_sequential`, :func:`compose_parallel`, :func:`compose_advanced`.
* :func:`zcdp_rho`, :func:`zcdp_epsilon`, :func:`zcdp_delta`: zero-concentrated DP and its
  tight conversion to (epsilon, delta) (Canonne, Kamath & Steinke 2020).
* :class:`PrivacyLedger`: charge fits and scorer calls against a budget.

Throughout: add/remove-one-row neighbours with ``n`` public; ``noise_multiplier`` is
the noise standard deviation over the L2 sensitivity, ``sample_rate`` the Poisson
sampling probability ``q`` and ``steps`` the number of noisy steps ``T``.
"""

from skdp.accounting._accountant import (
    Accountant,
    GDPCLTAccountant,
    PLDAccountant,
    RDPAccountant,
    available_accountants,
    get_accountant,
    register_accountant,
)
from skdp.accounting._calibration import (
    calibrate_noise_multiplier,
    compute_epsilon,
    resolve_noise_multiplier,
)
from skdp.accounting._composition import compose_advanced, compose_parallel, compose_sequential
from skdp.accounting._gdp import (
    gdp_clt_mu,
    gdp_clt_noise_multiplier,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
)
from skdp.accounting._ledger import PrivacyLedger
from skdp.accounting._rdp import (
    CONVERSIONS,
    DEFAULT_ORDERS,
    rdp_gaussian,
    rdp_pure_dp,
    rdp_subsampled_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
)
from skdp.accounting._zcdp import zcdp_delta, zcdp_epsilon, zcdp_rho

__all__ = [
    "Accountant",
    "CONVERSIONS",
    "DEFAULT_ORDERS",
    "GDPCLTAccountant",
    "PLDAccountant",
    "PrivacyLedger",
    "RDPAccountant",
    "available_accountants",
    "calibrate_noise_multiplier",
    "compose_advanced",
    "compose_parallel",
    "compose_sequential",
    "compute_epsilon",
    "gdp_clt_mu",
    "gdp_clt_noise_multiplier",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "get_accountant",
    "rdp_gaussian",
    "rdp_pure_dp",
    "rdp_subsampled_gaussian",
    "rdp_to_delta",
    "rdp_to_epsilon",
    "register_accountant",
    "resolve_noise_multiplier",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho",
]
