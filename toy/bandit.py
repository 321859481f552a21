r"""The two-armed bandit of Part I §8 (and Part II exercise 1).

One parameter θ, two actions: A with probability :math:`p = \sigma(\theta)` and reward 1, B with
probability :math:`1-p` and reward 0. So :math:`J(\theta) = p` and :math:`dJ/d\theta = p(1-p)`.
The score function is :math:`g(a) = \frac{d}{d\theta}\log\pi(a)`: :math:`1-p` for A, :math:`-p` for B.
Everything here is exact except :func:`sample`, which draws actions.
"""
import numpy as np

from . import rl
from ._check_args import MAX_ELEMENTS, as_array, broadcast, checked, generator, int_array, integer, size
from .prob import sigmoid

__all__ = ["prob_a", "score", "reward", "estimates", "exact_gradient", "moments",
           "optimal_baseline", "sample"]

A, B = 0, 1  # action ids


def _actions(actions):
    a = int_array(actions, "actions")
    if not np.all((a == A) | (a == B)):
        raise ValueError(f"actions must be 0 (arm A) or 1 (arm B), got {np.unique(a)}")
    return a


def _check_theta(theta):
    return {"theta": as_array(theta, "theta")}


@checked(_check_theta)
def prob_a(theta):
    r""":math:`p = \sigma(\theta)`, the probability of arm A."""
    return sigmoid(theta)


def _check_score(theta, actions):
    broadcast([np.shape(theta), np.shape(actions)], ["theta", "actions"])
    return {"theta": as_array(theta, "theta"), "actions": _actions(actions)}


@checked(_check_score)
def score(theta, actions):
    r""":math:`g(a) = \frac{d}{d\theta}\log\pi_\theta(a)`: :math:`1-p` for A, :math:`-p` for B."""
    p = prob_a(theta)
    return np.where(np.asarray(actions) == A, 1.0 - p, -p)


def _check_reward(actions):
    return {"actions": _actions(actions)}


@checked(_check_reward)
def reward(actions):
    """R = 1 for arm A, 0 for arm B."""
    return np.where(np.asarray(actions) == A, 1.0, 0.0)


def _check_estimates(theta, actions, b):
    broadcast([np.shape(theta), np.shape(actions), np.shape(b)], ["theta", "actions", "b"])
    return {**_check_score(theta, actions), "b": as_array(b, "b")}


@checked(_check_estimates)
def estimates(theta, actions, b=0.0):
    r"""Per-sample REINFORCE estimates :math:`\hat g = (R - b)\, g(a)` for the given actions."""
    return (reward(actions) - b) * score(theta, actions) + 0.0   # + 0.0 turns -0.0 into 0.0


@checked(_check_theta)
def exact_gradient(theta):
    r""":math:`\frac{dJ}{d\theta} = p(1-p)`: the bandit is a softmax over the logits (θ, 0) with
    rewards (1, 0), so this is the first entry of :func:`toy.rl.softmax_pg_exact`,
    :math:`\pi_A (R_A - \pi^\top R) = p(1 - p)`."""
    theta = np.asarray(theta, dtype=float)
    grad = rl.softmax_pg_exact(np.stack([theta, np.zeros_like(theta)], axis=-1), [1.0, 0.0])
    return grad[..., 0] if theta.ndim else float(grad[0])


def _check_moments(theta, b):
    b = as_array(b, "b")
    broadcast([np.shape(theta), b.shape], ["theta", "b"])
    return {"theta": as_array(theta, "theta"), "b": b}


@checked(_check_moments)
def moments(theta, b=0.0):
    r"""Exact mean and standard deviation of the single-sample estimate :math:`(R-b)g(a)`,
    by summing over the two actions (``b`` may be an array of baselines)."""
    p = prob_a(theta)
    b = np.asarray(b, dtype=float)
    ga, gb = (1.0 - b) * (1.0 - p), (0.0 - b) * (-p)     # estimate if A, if B
    mean = p * ga + (1 - p) * gb
    var = p * ga ** 2 + (1 - p) * gb ** 2 - mean ** 2
    return mean, np.sqrt(np.maximum(var, 0.0))


def _check_optimal_baseline(theta):
    theta = as_array(theta, "theta")
    p = sigmoid(theta)
    if np.any((p == 0) | (p == 1)):
        raise ValueError(f"theta must have 0 < sigmoid(theta) < 1 in floating point (|theta| < 36)")
    return {"theta": theta}


@checked(_check_optimal_baseline)
def optimal_baseline(theta):
    r"""The variance-minimising constant baseline :math:`b^* = \mathbb{E}[R g^2] / \mathbb{E}[g^2]`."""
    p = prob_a(theta)
    e_rg2 = p * (1 - p) ** 2                   # only arm A has R = 1
    e_g2 = p * (1 - p) ** 2 + (1 - p) * p ** 2
    return e_rg2 / e_g2


def _check_sample(theta, n, rng):
    n = integer(n, "n", lo=1)
    size(n, "n", MAX_ELEMENTS, "draws")
    generator(rng)
    broadcast([np.shape(theta), (n,)], ["theta", "n"])
    return {"theta": as_array(theta, "theta"), "n": n}


@checked(_check_sample)
def sample(theta, n, rng):
    """Draw n actions (0 = A, 1 = B) from the policy."""
    return np.where(rng.random(n) < prob_a(theta), A, B)
