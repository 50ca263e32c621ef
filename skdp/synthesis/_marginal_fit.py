"""The second half of :meth:`DPMarginalSynthesizer.fit
<skdp.synthesis.DPMarginalSynthesizer.fit>`: AIM's rounds after the 1-way release, and
the fitted facts both selections record (schema, grid, noisy 1-way release, noise
scales, budget split and privacy facts)."""

from __future__ import annotations

import math

import numpy as np

from skdp.synthesis._marginal_aim import run_rounds

__all__ = ["MarginalFitMixin"]


class MarginalFitMixin:
    """AIM's rounds and the fitted facts of :class:`~skdp.synthesis.DPMarginalSynthesizer`
    (the estimator's ``fit`` releases the 1-way marginals and calls these)."""

    def _fit_aim(self, state, plan, streams):
        """AIM's rounds after the 1-way release (``selection="aim"``)."""
        schema, discs, names, y1, supports, counts_of, csizes, y1c, v1c, totals, t_var = state
        rngs = (streams["select"], streams["two_way"])
        tree, mu, n_hat, meas, record = run_rounds(
            counts_of, csizes, y1c, v1c, totals, t_var, plan, *rngs
        )
        del counts_of

        def key(c):
            return tuple(names[j] for j in c)

        self.selection_ = "aim"
        self._set_one_way_facts(schema, discs, names, y1, supports)
        self.noisy_two_way_ = self.tree_ = self.edge_marginals_ = None
        self.cliques_ = [key(c) for c in tree.cliques]
        self.noisy_marginals_ = {}
        for cols, y, _ in meas[len(names) :]:
            self.noisy_marginals_.setdefault(key(cols), []).append(y.copy())
        self.clique_marginals_ = {key(c): m for c, m in zip(tree.cliques, mu, strict=True)}
        if plan.mechanism == "laplace":
            charge_keys = ("epsilon_select", "epsilon_measure")
        else:
            charge_keys = ("rho_select", "rho_measure")
        self.rounds_ = [
            {
                "marginal": key(c),
                charge_keys[0]: None if plan.mechanism == "none" else float(sel),
                charge_keys[1]: None if plan.mechanism == "none" else float(mea),
                "noise_scale": float(scale),
            }
            for c, sel, mea, scale in record
        ]
        nodes = [tree.marginal(mu, (j,)) for j in range(len(names))]
        self.node_marginals_ = {c: nodes[j] for j, c in enumerate(names)}
        self.n_records_ = float(n_hat)
        order = tree.sampling_order(mu, nodes)
        self._aim_order = [(sep, new, np.cumsum(cond, axis=1)) for sep, new, cond in order]
        self._aim_cond = [cond for _, _, cond in order]
        self._csizes = list(csizes)
        return self._record_budget_facts(plan, discs, measured=bool(record))

    def _set_one_way_facts(self, schema, discs, names, y1, supports):
        """Fitted facts common to both selections: schema, grid and noisy 1-way release."""
        self.schema_ = schema
        self.bounds_ = {c.name: c.bounds for c in schema if c.is_numeric}
        self.n_bins_ = {c: discs[c].n_levels for c in names}
        self.bin_edges_ = {c.name: discs[c.name].edges.copy() for c in schema if c.is_numeric}
        self.noisy_one_way_ = {c: y1[j].copy() for j, c in enumerate(names)}
        self.supports_ = {c: supports[j] for j, c in enumerate(names)}

    def _record_budget_facts(self, plan, discs, *, measured):
        """Noise scales, budget split and the privacy facts (both selections), from the
        plan; ``measured``: whether any marginal beyond the 1-way ones was measured
        (else the 2-way scale is 0 and the selection epsilon ``inf``)."""
        self.noise_ = {
            "mechanism": plan.mechanism,
            "one_way_scale": float(plan.one_way_scale),
            "two_way_scale": float(plan.two_way_scale) if measured else 0.0,
            "select_epsilon": float(plan.select_epsilon) if measured else math.inf,
        }
        self.rho_ = plan.rho
        self.rho_breakdown_ = plan.rho_breakdown()
        self.privacy_breakdown_ = plan.breakdown()
        self._discs = discs
        self._record_privacy_spent(plan.epsilon_spent, plan.delta_spent)
        return self
