"""The per-record free-energy terms of DP-NF-VI and their exact per-record gradients.

Su, Wang, Schiavazzi & Liu (2023), Eq. (4): the free energy (negative ELBO) split into one
term per record, ``l_i``, each with a ``1/n`` share of the data-free (entropy and prior)
part, so that each record's gradient can be clipped (:class:`skdp.sampling.DPFlowVI`).
"""

from __future__ import annotations

__all__ = ["_FreeEnergyGradients", "_record_free_energy_module", "check_log_lik", "mc_elbo"]


# --------------------------------------------------------------- the per-record loss
def _record_free_energy_module(flow, log_lik, log_prior, n, include_data_free):
    """``nn.Module`` whose call on a batch of records returns their free-energy terms ``l_i``.

    ``l_i = mean_j[(1/n)(log q0(z_j) - log|det dtheta/dz|_j - log p(theta_j))
    - log p(x_i | theta_j)]`` with the MC draws ``z`` held in the buffer ``z`` (the same for
    every record of a step and independent of the data); ``include_data_free=False`` drops
    the ``1/n`` data-free part (it is then handled separately).

    ``module(x, what="sampling")`` returns the flow's sampling map ``(theta, log|det|)`` of
    ``x`` (MC draws) and ``module(None, what="data_free")`` the per-draw data-free term, so
    that both can be evaluated with ``torch.func.functional_call``.
    """
    import torch
    from torch import nn

    from skdp.flows import standard_normal_log_prob

    class _RecordFreeEnergy(nn.Module):
        def __init__(self):
            super().__init__()
            self.flow = flow
            self.log_lik_fn = log_lik
            self.register_buffer("z", torch.zeros(1, flow.n_features))

        def data_free(self):
            theta, ladj = self.flow.inverse_and_ladj(self.z)
            term = standard_normal_log_prob(self.z) - ladj
            if log_prior is not None:
                term = term - log_prior(theta)
            return theta, term  # (m, p), (m,)

        def forward(self, x, what="loss"):
            if what == "sampling":
                return self.flow.inverse_and_ladj(x)
            theta, term = self.data_free()
            if what == "data_free":
                return term
            ll = self.log_lik_fn(theta, x)  # (m, b)
            loss = -ll.mean(0)
            if include_data_free:
                loss = loss + term.mean() / n
            return loss

    return _RecordFreeEnergy()


def _identity(v):
    return v


#: Largest ``n_mc * n_params * n_flow_parameters`` for which the per-row Jacobian path is used.
_JACOBIAN_MAX_ENTRIES = 20_000_000


class _FreeEnergyGradients:
    """Per-record gradients of the free-energy terms ``l_i`` for one set of MC draws ``z``.

    Two exact paths (tested against each other and against a per-record loop):

    * ``"jacobian"``: the flow maps every MC draw separately, so ``d theta_j / d lambda`` is a
      per-row Jacobian (``vmap(jacrev(...))`` over the draws, independent of the records);
      record ``i``'s likelihood gradient is then
      ``-(1/m) sum_j (d log p(x_i | theta_j) / d theta_j)^T d theta_j / d lambda``: one matrix
      product for the whole batch;
    * ``"records"``: ``vmap(grad(...))`` over the records of the module whose call returns
      ``l_i`` (:func:`skdp.training.per_sample_gradients`); ``"loop"`` is its reference loop.

    The data-free part ``(1/n) grad mean_j[log q0(z_j) - log|det|_j - log p(theta_j)]`` is the
    same for every record and is returned separately, so that ``privatize`` can add it to
    every record before clipping or once after the noise.
    """

    def __init__(self, flow, log_lik, log_prior, n, method="auto"):
        self.flow = flow
        self.log_lik = log_lik
        self.n = float(n)
        self.module = _record_free_energy_module(flow, log_lik, log_prior, n, False)
        self.params = {k: p for k, p in self.module.named_parameters() if p.requires_grad}
        self.n_par = sum(p.numel() for p in self.params.values())
        if method not in ("auto", "jacobian", "records", "loop"):
            raise ValueError(f"unknown gradient method {method!r}")
        self.method = method

    def resolve_method(self, m):
        if self.method != "auto":
            return self.method
        size = m * self.flow.n_features * self.n_par
        return "jacobian" if size <= _JACOBIAN_MAX_ENTRIES else "records"

    def _grad(self, term):
        import torch

        grads = torch.autograd.grad(term, list(self.params.values()), allow_unused=True)
        return {
            k: (g.detach() if g is not None else torch.zeros_like(v))
            for (k, v), g in zip(self.params.items(), grads, strict=True)
        }

    def data_free_gradient(self, with_value=False):
        """``(1/n) grad_lambda mean_j[log q0(z_j) - log|det|_j - log p(theta_j)]`` (and, with
        ``with_value``, the term's value as a float)."""
        import torch

        with torch.enable_grad():
            term = self.module(None, what="data_free").mean() / self.n
            grad = self._grad(term)
        return (grad, float(term.detach())) if with_value else grad

    def likelihood_sum(self, X):
        """``(grad sum_i l_i^lik, sum_i l_i^lik)`` in one backward pass (no privacy)."""
        import torch

        if X.shape[0] == 0:
            return {k: torch.zeros_like(v) for k, v in self.params.items()}, 0.0
        with torch.enable_grad():
            term = self.module(X).sum()
            grad = self._grad(term)
        return grad, float(term.detach())

    def private_terms(self, Xt, privatizer, *, full, groups=None):
        """``grad_sum(idx)`` (clipped per-record sum) and the data-free hook of one DP step.

        ``full`` (``privatize="per_record_full"``, the paper's Algorithm 2): each record's
        whole term ``l_i``, data-free share included, is clipped, and there is no hook.
        Otherwise (``"likelihood_only"``) the likelihood parts are clipped and the exact
        data-free gradient is the hook, added after the noise (post-processing: it does
        not read the data). ``groups`` (a :class:`~skdp.training.RecordGroups`): ``idx``
        are patients, and a patient's record is the sum of their rows' likelihood terms
        (the likelihood of all their rows; ``n`` counts patients).
        """
        import torch

        from skdp.training import segment_sum

        def grad_sum(idx):
            seg = None
            if groups is not None:
                idx, seg = groups.rows(idx)
            index = torch.as_tensor(idx, dtype=torch.long, device=Xt.device)
            per = self.likelihood_gradients(Xt.index_select(0, index))
            if seg is not None:  # one term per sampled patient: the sum of their rows'
                per = segment_sum(per, seg, int(seg.max()) + 1 if len(seg) else 0)
            if full:
                free = self.data_free_gradient()
                per = {k: g + free[k].unsqueeze(0) for k, g in per.items()}
            return privatizer.clip_and_sum(per)

        return grad_sum, (None if full else self.data_free_gradient)

    def plain_terms(self, Xt, B, groups=None):
        """Non-private step: ``grad_sum(idx)`` (plain sum of the likelihood gradients), the
        exact data-free gradient as the hook, and ``loss()``, the step's estimate of the
        free energy (negative ELBO): ``(n / B) sum_batch l_i^lik`` plus the data-free term
        (``idx`` are patients with ``groups``, each record the sum of their rows')."""
        import torch

        seen = {}

        def grad_sum(idx):
            if groups is not None:
                idx, _ = groups.rows(idx)
            index = torch.as_tensor(idx, dtype=torch.long, device=Xt.device)
            summed, seen["lik"] = self.likelihood_sum(Xt.index_select(0, index))
            return summed, 0

        def hook():
            free, seen["free"] = self.data_free_gradient(with_value=True)
            return free

        def loss():
            return self.n * (seen["lik"] / B + seen["free"])

        return grad_sum, hook, loss

    def likelihood_gradients(self, X):
        """Per-record gradients of ``-mean_j log p(x_i | theta_j)``: ``{name: (b, *shape)}``."""
        import torch
        from torch.func import functional_call, grad, jacrev, vmap

        from skdp.training import per_sample_gradients

        params = {k: v.detach() for k, v in self.params.items()}
        b = X.shape[0]
        method = self.resolve_method(self.module.z.shape[0])
        if method in ("records", "loop"):
            return per_sample_gradients(
                self.module,
                _identity,
                X,
                params=params,
                method="vmap" if method == "records" else "loop",
            )
        if b == 0:
            return {
                k: torch.zeros((0, *v.shape), dtype=v.dtype, device=v.device)
                for k, v in params.items()
            }
        buffers = {k: v.detach() for k, v in self.module.named_buffers()}
        module = self.module
        z = module.z

        def theta_of_row(prm, zj):
            return functional_call(module, (prm, buffers), (zj,), {"what": "sampling"})[0]

        J = vmap(jacrev(theta_of_row), in_dims=(None, 0))(params, z)  # {name: (m, p, *shape)}
        with torch.no_grad():
            theta = module.flow.inverse_and_ladj(z)[0]
        log_lik = self.log_lik

        def record_ll(th, x):
            return log_lik(th, x[None]).sum()

        G = vmap(grad(record_ll), in_dims=(None, 0))(theta, X)  # (b, m, p)
        m = z.shape[0]
        Gf = G.reshape(b, -1)
        return {
            k: (-(Gf @ Jk.reshape(Gf.shape[1], -1)) / m).reshape(b, *Jk.shape[2:])
            for k, Jk in J.items()
        }


def check_log_lik(module, X, m):
    """Check the output shape of ``log_lik`` on one record (shape only, no values)."""
    import torch

    with torch.no_grad():
        theta, _ = module.data_free()
        ll = module.log_lik_fn(theta, X[:1])
    if not isinstance(ll, torch.Tensor) or tuple(ll.shape) != (m, 1):
        shape = tuple(ll.shape) if isinstance(ll, torch.Tensor) else type(ll).__name__
        raise ValueError(
            "log_lik(theta, X) must return a tensor of shape (n_theta, n_records); got "
            f"{shape} for theta of shape {tuple(theta.shape)} and one record"
        )


def mc_elbo(flow, log_lik, log_prior, X, m, gen, tdtype):
    """MC estimate of the ELBO on ``X`` with ``m`` draws (no privacy: reads ``X``)."""
    import torch

    from skdp.flows import standard_normal_log_prob

    with torch.no_grad():
        z = torch.randn((m, flow.n_features), generator=gen, device=X.device, dtype=tdtype)
        theta, ladj = flow.inverse_and_ladj(z)
        log_q = standard_normal_log_prob(z) - ladj
        ll = torch.zeros(m, dtype=tdtype, device=X.device)
        for start in range(0, X.shape[0], 4096):
            ll = ll + log_lik(theta, X[start : start + 4096]).sum(1)
        lp = log_prior(theta) if log_prior is not None else 0.0
        return float((ll + lp - log_q).mean().item())
