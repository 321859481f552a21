"""toy.rl.ppo's two equations that came from the trainer: ``value_loss`` against a plain loop and
finite differences, and ``ppo_targets``' per-token branch against ``gae`` plus the normalisation."""
import numpy as np
import pytest

from toy import rl


def test_value_loss_is_half_the_token_mean_of_the_squared_error():
    rng = np.random.default_rng(0)
    V, R = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    m = (rng.random((3, 5)) < 0.7).astype(float)
    m[:, 0] = 1
    naive = 0.5 * sum((V[i, t] - R[i, t]) ** 2 for i in range(3) for t in range(5) if m[i, t]) / m.sum()
    loss, dV = rl.value_loss(V, R, m, vf_coef=0.5)
    assert loss == pytest.approx(naive, rel=1e-12)
    fd = np.zeros_like(V)
    for i in range(3):
        for t in range(5):
            e = np.zeros_like(V)
            e[i, t] = 1e-6
            fd[i, t] = 0.5 * (rl.value_loss(V + e, R, m)[0] - rl.value_loss(V - e, R, m)[0]) / 2e-6
    np.testing.assert_allclose(dV, fd, atol=1e-8)                     # the gradient of vf_coef × loss


def test_ppo_targets_per_token_is_gae_then_normalised():
    rng = np.random.default_rng(1)
    r, V = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    m = np.ones((4, 6))
    m[1, 4:] = m[3, 2:] = 0
    ret, adv = rl.ppo_targets(r, V, m)
    a, want_ret = rl.gae(r, V, m)
    tokens = a[m == 1]
    want = (a - tokens.mean()) / (tokens.std() + 1e-8)
    np.testing.assert_allclose(ret, want_ret, atol=1e-12)
    np.testing.assert_allclose(adv[m == 1], want[m == 1], atol=1e-12)
    with pytest.raises(ValueError, match="rewards"):
        rl.ppo_targets(np.zeros(3), V, m)
