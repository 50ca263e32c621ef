"""The constrained transforms ``CholeskyAffine`` and ``BoxSigmoid`` (spec E §6: T11)."""

from __future__ import annotations

import pytest
import torch

from skdp.flows import BoxSigmoid, CholeskyAffine

F64 = torch.float64


# -- T11: log-determinants against autograd ---------------------------------------------------
@pytest.mark.parametrize("d", [1, 3, 5])
def test_transform_logdets_match_autograd(d):
    g = torch.Generator().manual_seed(d)
    L = torch.tril(torch.randn(d, d, generator=g, dtype=F64))
    L.diagonal().copy_(torch.rand(d, generator=g, dtype=F64) + 0.2)
    transforms = [
        CholeskyAffine(d, loc=torch.randn(d, generator=g, dtype=F64), scale_tril=L).double(),
        BoxSigmoid(d, -1.0, 2.5).double(),
    ]
    for t in transforms:
        z = torch.randn(d, generator=g, dtype=F64)
        x, ladj = t.inverse_and_ladj(z)
        J = torch.autograd.functional.jacobian(lambda v, t=t: t.inverse_and_ladj(v)[0], z)
        assert float(ladj.detach()) == pytest.approx(float(torch.linalg.slogdet(J)[1]), abs=1e-10)
        z2, ladj2 = t(x)
        torch.testing.assert_close(z2, z, atol=1e-9, rtol=0)
        assert float(ladj2.detach()) == pytest.approx(-float(ladj.detach()), abs=1e-10)
        Jf = torch.autograd.functional.jacobian(lambda v, t=t: t(v)[0], x)
        assert float(ladj2.detach()) == pytest.approx(float(torch.linalg.slogdet(Jf)[1]), abs=1e-9)
