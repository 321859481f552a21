r"""Part II's world: multi-step arithmetic, and a toy language model you can train.

**Problems.** Start from a two-digit number and apply 2–12 steps, each "+ b" or "× m". Every
step has a *context* = operation × difficulty, fixed by the problem (it is computed on the
correct intermediate values):

==  ====================  =====================================================
0   add, no carry         ``v + b`` with no column carry
1   add, carry            ``v + b`` with at least one carry
2   × 1 digit             ``v × d``, d in 2..9, some digit product carries
3   × 2 digits            ``v × m``, m in 11..99, v < 100
4   × 2 digits, ≥ 100     ``v × m``, m in 11..99, 100 ≤ v < 1000
==  ====================  =====================================================

**The model.** In every context it picks one of three *methods* for the step:

- ``correct``: the right result;
- ``bug``: a systematic carry error — it drops every carry (or, where there is none, writes
  a phantom carry, +10). A carry only moves digits *left*, so the bug never changes the
  units digit;
- ``slip``: the right result off by a small amount (±1..9), so the units digit is wrong.

Its policy in context c is

.. math:: \pi(\cdot \mid c) = \mathrm{softmax}\big((z_c + \Delta_c) / T\big),

with fixed base logits :math:`z_c` (the "pretrained" model) and a trainable offset
:math:`\Delta_c \in \mathbb{R}^3` that starts at 0 and is shared by every problem: 5 contexts ×
3 methods = a language model with 15 "neurons". Training only ever changes Δ.
Each method computes a real number from the *actual* running value, so mistakes propagate and
an answer can be checked exactly, or coarsely (units digit only).

Shapes: P problems, n samples per problem, L = longest problem (steps), C = 5 contexts,
K = 3 methods. Padding steps have context −1.
"""
from dataclasses import dataclass

import numpy as np

from .._check_args import (as_array, broadcast, generator, instance, int_array, integer, nonneg,
                          positive, seed as check_seed, size)
from .. import metrics
from ..prob import log_softmax, sample_categorical

__all__ = [
    "CONTEXTS", "METHODS", "ADD_NC", "ADD_C", "MUL1", "MUL2", "MUL2_BIG", "CORRECT", "BUG", "SLIP",
    "P_START", "BASE_LOGITS", "CONTEXT_WEIGHTS", "Problems", "make_problems", "make_dataset", "Model",
    "Samples", "sample", "draw_methods", "execute", "as_samples", "apply_method", "VERIFIERS", "verify",
    "p_solve", "pass1_exact", "step_entropy", "trace",
]

CONTEXTS = ("add, no carry", "add, carry", "× 1 digit", "× 2 digits", "× 2 digits, ≥ 100")
METHODS = ("correct", "bug", "slip")
ADD_NC, ADD_C, MUL1, MUL2, MUL2_BIG = range(5)
CORRECT, BUG, SLIP = range(3)

# The pretrained model's method probabilities per context (rows sum to 1). The lecture's
# calibration: P(correct) = 0.821 / 0.506 / 0.186 / 0.102 for add-no-carry / ×1 / ×2 / ×2 ≥ 100,
# with the bug more likely than correct in the last two.  "add, carry" is ours.
P_START = np.array([
    [0.821, 0.090, 0.089],   # add, no carry
    [0.800, 0.130, 0.070],   # add, carry
    [0.506, 0.300, 0.194],   # × 1 digit
    [0.186, 0.550, 0.264],   # × 2 digits
    [0.102, 0.600, 0.298],   # × 2 digits, multiplicand ≥ 100
])
BASE_LOGITS = np.log(P_START) - np.log(P_START[:, :1])   # (C, K), logit of "correct" = 0

# How often the generator picks each context when it is possible (tuned so that the test
# set's pass@1 at T = 1 is about 0.1).
CONTEXT_WEIGHTS = np.array([5.0, 2.0, 1.5, 2.0, 2.0])


# --------------------------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------------------------

@dataclass
class Problems:
    """A set of P arithmetic chains, padded to L steps."""
    start: np.ndarray      # (P,)   int64, the starting number
    is_mul: np.ndarray     # (P, L) bool, True for "× m", False for "+ b"
    operand: np.ndarray    # (P, L) int64, b or m (0 on padding)
    context: np.ndarray    # (P, L) int, 0..4, −1 on padding
    answer: np.ndarray     # (P,)   int64, the correct final value

    def __len__(self):
        return len(self.start)

    @property
    def mask(self):
        """(P, L) 1.0 on real steps, 0.0 on padding."""
        return (self.context >= 0).astype(float)

    @property
    def n_steps(self):
        """(P,) number of steps of each problem."""
        return (self.context >= 0).sum(axis=1)

    def text(self, i):
        """Problem i written out, e.g. ``'47 × 6 + 18 = ?'`` (evaluated left to right)."""
        i = integer(i, "i", 0, len(self) - 1)
        parts = [str(self.start[i])]
        for t in range(self.n_steps[i]):
            parts.append(("× " if self.is_mul[i, t] else "+ ") + str(self.operand[i, t]))
        return " ".join(parts) + " = ?"

    def subset(self, idx):
        """The problems at indices ``idx`` (or where the boolean ``idx`` (P,) is True)."""
        k = np.asarray(idx)
        if not (k.dtype == bool and k.shape == (len(self),)):
            int_array(k, "idx", -len(self), len(self) - 1)
        return Problems(self.start[idx], self.is_mul[idx], self.operand[idx],
                        self.context[idx], self.answer[idx])


def _digits(x, n=10):
    """(…, n) decimal digits of non-negative ints, least significant first."""
    x = np.asarray(x, dtype=np.int64)
    return (x[..., None] // 10 ** np.arange(n, dtype=np.int64)) % 10


def _dig(x, n=10):
    """Decimal digits of a Python int, least significant first (the generator's scalar version)."""
    return [(x // 10**k) % 10 for k in range(n)]


def _has_add_carry(a, b):
    return any(p + q >= 10 for p, q in zip(_dig(a), _dig(b)))


def _has_mul_carry(a, m):
    return any(p * q >= 10 for p in _dig(a) for q in _dig(m, 2))


def _draw_step(v, rng):
    """Pick (context, is_mul, operand) for the next step from running value v, or None."""
    low, big_digit = _dig(v, 2), max(_dig(v)) >= 2   # without a digit ≥ 2 no product carries
    ok = np.array([min(low) < 9, max(low) > 0, v < 10**4 and big_digit,
                   10 <= v < 100 and big_digit, 100 <= v < 1000 and big_digit])
    w = CONTEXT_WEIGHTS * ok
    c = rng.choice(5, p=w / w.sum())
    for _ in range(200):
        if c == ADD_NC:
            b = int(sum(rng.integers(0, 10 - d) * 10**i for i, d in enumerate(low)))
            if b > 0:
                return c, False, b
        elif c == ADD_C:
            b = int(rng.integers(1, 100))
            if _has_add_carry(v, b):
                return c, False, b
        else:
            m = int(rng.integers(2, 10)) if c == MUL1 else int(rng.integers(11, 100))
            if _has_mul_carry(v, m):
                return c, True, m
    return None


def make_problems(n, seed, min_steps=2, max_steps=12):
    """``n`` random problems with ``min_steps``..``max_steps`` steps (uniform), from ``seed``."""
    n, seed = integer(n, "n", lo=1), check_seed(seed)
    min_steps, max_steps = integer(min_steps, "min_steps", lo=1), integer(max_steps, "max_steps", lo=1)
    if not (1 <= min_steps <= max_steps):
        raise ValueError(f"min_steps/max_steps must satisfy 1 <= min_steps <= max_steps, "
                         f"got {min_steps}, {max_steps}")
    size(n * max_steps, "n and max_steps", what="problem steps")
    rng = np.random.default_rng(seed)
    n, L = int(n), int(max_steps)
    start = rng.integers(10, 100, size=n).astype(np.int64)
    is_mul = np.zeros((n, L), bool)
    operand = np.zeros((n, L), np.int64)
    context = -np.ones((n, L), int)
    answer = start.copy()
    for i in range(n):
        steps = rng.integers(min_steps, max_steps + 1)
        v = int(start[i])
        for t in range(steps):
            c, mul, x = _draw_step(v, rng)
            context[i, t], is_mul[i, t], operand[i, t] = c, mul, x
            v = v * x if mul else v + x
        answer[i] = v
    return Problems(start, is_mul, operand, context, answer)


def make_dataset(n_train=300, n_test=200, seed=0, **kw):
    """The default train / test split: two independent problem sets generated from ``seed``."""
    integer(n_train, "n_train", lo=1), integer(n_test, "n_test", lo=1), check_seed(seed)
    size(n_train, "n_train", what="problems"), size(n_test, "n_test", what="problems")
    return make_problems(n_train, seed, **kw), make_problems(n_test, seed + 10_000, **kw)


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------

class Model:
    r"""π(· | c) = softmax((base_logits[c] + delta[c] + hint·e_correct) / T), c = 0..4."""

    def __init__(self, base_logits=BASE_LOGITS, delta=None):
        self.base_logits = as_array(base_logits, "base_logits", ndim=2)      # (C, K)
        self.delta = (np.zeros_like(self.base_logits) if delta is None
                      else as_array(delta, "delta", ndim=2).copy())          # (C, K)
        if self.delta.shape != self.base_logits.shape:
            raise ValueError(f"delta must have shape {self.base_logits.shape}, got {self.delta.shape}")

    def copy(self):
        return Model(self.base_logits, self.delta)

    def logits(self, hint=0.0):
        """(C, K) logits; ``hint`` adds a bonus to the logit of method 0, the correct one
        (rationalization)."""
        z = self.base_logits + self.delta
        return z + nonneg(hint, "hint") * np.eye(z.shape[1])[CORRECT]

    def log_probs(self, temperature=1.0, hint=0.0):
        """(C, K) log π(m | c)."""
        return log_softmax(self.logits(hint), positive(temperature, "temperature"))

    def probs(self, temperature=1.0, hint=0.0):
        """(C, K) π(m | c)."""
        return np.exp(self.log_probs(temperature, hint))

    def p_correct(self, temperature=1.0):
        """(C,) probability of the correct method in each context."""
        return self.probs(temperature)[:, CORRECT]

    def counts(self, context, method, weight):
        """(Σ w·onehot(a) per context (C, K), Σ w per context (C,)) over the steps given
        (broadcast to one shape; context −1 skipped): all that a weighted log-likelihood
        gradient Σ w (onehot(a) − π_c) needs from the data (``arith.train.train_sft`` computes it once)."""
        broadcast([np.shape(context), np.shape(method), np.shape(weight)], ["context", "method", "weight"])  # argcheck
        c, a, w = np.broadcast_arrays(np.asarray(context), np.asarray(method),
                                      np.asarray(weight, dtype=float))
        keep = c >= 0
        c, a, w = c[keep], a[keep], w[keep]
        C, K = self.delta.shape
        if c.dtype.kind not in "iu" or (c.size and c.max() >= C):  # argcheck
            raise ValueError(f"context must be integers in -1..{C - 1}")
        if a.dtype.kind not in "iu" or (a.size and (a.min() < 0 or a.max() >= K)):  # argcheck
            raise ValueError(f"method must be integers in 0..{K - 1} on real steps")
        if not np.isfinite(w).all():  # argcheck
            raise ValueError("weight must be finite")
        onehot = np.bincount(c * K + a, weights=w, minlength=C * K).reshape(C, K)  # Σ w·onehot
        total = np.bincount(c, weights=w, minlength=C)                            # Σ w per context
        return onehot, total


# --------------------------------------------------------------------------------------------
# Executing methods and sampling
# --------------------------------------------------------------------------------------------

def _nocarry_add(a, b):
    """Column sums mod 10: addition that forgets every carry."""
    s = (_digits(a) + _digits(b)) % 10
    return (s * 10 ** np.arange(s.shape[-1], dtype=np.int64)).sum(-1)


def _nocarry_mul(a, m):
    """Long multiplication whose partial products forget their carries (then added correctly)."""
    da, dm = _digits(a), _digits(m, 2)
    pw = 10 ** np.arange(da.shape[-1], dtype=np.int64)
    out = np.zeros(np.shape(a), np.int64)
    for j in range(2):
        partial = (((da * dm[..., j:j + 1]) % 10) * pw).sum(-1)
        out = out + partial * 10**j
    return out


def _carry_bug(v, operand, is_mul):
    """The systematic bug: drop every carry; where there is none, write a phantom carry (+10)."""
    right = np.where(is_mul, v * operand, v + operand)
    dropped = np.where(is_mul, _nocarry_mul(v, operand), _nocarry_add(v, operand))
    return np.where(dropped == right, right + 10, dropped)


def apply_method(v, operand, is_mul, method, slip):
    """One step on running values ``v`` with the chosen ``method`` (all arrays broadcast).

    correct: v + b or v × m.  bug: the carry error (drop all carries; if there is none, a
    phantom carry +10).  slip: correct + ``slip`` (a nonzero amount in −9..9; made positive
    if the result would go negative).
    """
    arrays = [int_array(v, "v", lo=0), int_array(operand, "operand", lo=0), np.asarray(is_mul),
              int_array(method, "method", CORRECT, SLIP), int_array(slip, "slip", -9, 9)]
    broadcast([a.shape for a in arrays], ["v", "operand", "is_mul", "method", "slip"])
    if arrays[2].dtype != bool and not np.all((arrays[2] == 0) | (arrays[2] == 1)):
        raise ValueError("is_mul must hold booleans")
    top_v, top_b = (int(a.max(initial=0)) for a in arrays[:2])        # Python ints: no wrap-around
    if max(top_v * top_b, top_v + top_b) + 20 >= 2**63:
        raise ValueError(f"v and operand must be small enough that v × operand fits in int64 (< 2**63), "
                         f"got up to {top_v} and {top_b}")
    return _apply_method(v, operand, is_mul, method, slip)


def _apply_method(v, operand, is_mul, method, slip):
    """:func:`apply_method` without the input checks (the samplers' inner loop; −1 = padding)."""
    v, operand, is_mul, method, slip = np.broadcast_arrays(v, operand, is_mul, method, slip)
    right = np.where(is_mul, v * operand, v + operand)
    out = np.where(method == SLIP, np.where(right + slip >= 0, right + slip, right + np.abs(slip)), right)
    bug = method == BUG
    if bug.any():  # digit-by-digit, so the costly part: only where the bug is used
        out[bug] = _carry_bug(v[bug], operand[bug], is_mul[bug])
    return out


@dataclass
class Samples:
    """n sampled solutions for each of P problems."""
    method: np.ndarray     # (P, n, L) int, chosen method per step, −1 on padding
    context: np.ndarray    # (P, n, L) int, the step's context (broadcast from the problem)
    answer: np.ndarray     # (P, n) int64, the final value each solution reaches
    logp: np.ndarray       # (P, n, L) log π(method | context) at sampling (0 on padding)

    @property
    def mask(self):
        return (self.context >= 0).astype(float)

    @property
    def seq_logp(self):
        """(P, n) log-probability of each whole solution = Σ_t log π(a_t | c_t)."""
        return self.logp.sum(-1)


def sample(model, problems, n, rng, temperature=1.0, hint=0.0):
    """Sample ``n`` solutions per problem, all at once: (P, n, L) method draws."""
    _check_model_problems(model, problems)
    n = integer(n, "n", lo=1)
    size(n * problems.context.size * model.base_logits.shape[-1], "n", what="method probabilities")
    generator(rng)
    logp_table = model.log_probs(temperature, hint)                          # (C, K)
    method, slip = draw_methods(logp_table, problems.context, n, rng)
    return as_samples(problems, method, execute(problems, method, slip), logp_table)


def draw_methods(logp_table, context, n, rng):
    """The random part of :func:`sample`: methods (P, n, L) (−1 on padding) and slip amounts,
    ``n`` per problem from the table ``logp_table`` (C, K) = ``model.log_probs(T)``. With
    :func:`execute` and :func:`as_samples`, the three steps of :func:`sample`, for trainers that
    sample several models at once (``arith.train.train_reinforce_seeds``); they trust their caller."""
    ctx = np.broadcast_to(context[:, None, :], (len(context), n, context.shape[1]))
    real = ctx >= 0
    probs = np.exp(logp_table)[np.where(real, ctx, 0)]                       # (P, n, L, K)
    method = np.where(real, sample_categorical(probs, rng), -1)              # (P, n, L)
    slip = rng.integers(1, 10, size=method.shape) * rng.choice([-1, 1], size=method.shape)
    return method, slip


def execute(problems, method, slip, real=None):
    """Execute sampled ``method`` codes (P, n, L) step by step from each problem's start: the
    final values (P, n). ``real`` (P, n, L) marks the steps that exist (default: method ≥ 0)."""
    real = method >= 0 if real is None else real
    v = np.broadcast_to(problems.start[:, None], method.shape[:2]).astype(np.int64)
    for t in range(method.shape[2]):
        step = _apply_method(v, problems.operand[:, None, t], problems.is_mul[:, None, t],
                             method[:, :, t], slip[:, :, t])
        v = np.where(real[:, :, t], step, v)
    return v


def as_samples(problems, method, answer, logp_table):
    """The :class:`Samples` of ``method`` (P, n, L) with final values ``answer`` (P, n)."""
    ctx = np.broadcast_to(problems.context[:, None, :], method.shape)
    real = ctx >= 0
    logp = np.where(real, logp_table[np.where(real, ctx, 0), np.where(real, method, 0)], 0.0)
    return Samples(method, np.array(ctx), answer, logp)


VERIFIERS = ("exact", "units")


def verify(samples, problems, verifier="exact"):
    """(P, n) rewards in {0, 1}: ``"exact"`` compares the whole answer, ``"units"`` only its
    units digit (a coarse verifier: a carry bug always passes it, a slip usually not).
    ``verifier`` may also be a function ``f(answers (P, n), truth (P, 1)) -> bool (P, n)``."""
    if not callable(verifier) and verifier not in VERIFIERS:
        raise ValueError(f"verifier must be one of {VERIFIERS} or a function, got {verifier!r}")
    instance(samples, Samples, "samples"), instance(problems, Problems, "problems")
    if samples.answer.shape[0] != len(problems):
        raise ValueError(f"samples and problems must have the same number of problems, "
                         f"got {samples.answer.shape[0]} and {len(problems)}")
    got, want = samples.answer, problems.answer[:, None]
    if callable(verifier):
        ok = np.asarray(verifier(got, want), dtype=bool)
        if ok.shape != got.shape:
            raise ValueError(f"verifier must return shape {got.shape}, got {ok.shape}")
    elif verifier == "exact":
        ok = got == want
    else:
        ok = (got % 10) == (want % 10)
    return ok.astype(float)


def trace(problems, i, methods, slip=1):
    """Problem ``i`` solved step by step with the given ``methods`` (one per step): a list of
    dicts (step, operation, context, method, value, correct value) for a table."""
    instance(problems, Problems, "problems")
    i = integer(i, "i", 0, len(problems) - 1)
    n = int(problems.n_steps[i])
    methods = int_array(methods, "methods", CORRECT, SLIP)
    integer(slip, "slip", -9, 9)
    if methods.shape != (n,):
        raise ValueError(f"methods must have one entry per step, shape ({n},), got {methods.shape}")
    v, right, rows = np.int64(problems.start[i]), np.int64(problems.start[i]), []
    for t in range(n):
        x, mul, m = problems.operand[i, t], problems.is_mul[i, t], int(methods[t])
        v = apply_method(v, x, mul, m, slip)
        right = apply_method(right, x, mul, CORRECT, slip)
        rows.append({"step": t + 1, "operation": ("× " if mul else "+ ") + str(x),
                     "context": CONTEXTS[problems.context[i, t]], "method": METHODS[m],
                     "value": int(v), "correct value": int(right)})
    return rows


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------

def _check_model_problems(model, problems):
    instance(model, Model, "model"), instance(problems, Problems, "problems")

def p_solve(model, problems, temperature=1.0):
    r"""(P,) probability that one sample solves each problem: :math:`\prod_t \pi(\text{correct}\mid c_t)`.

    This is P(every step correct); it equals P(answer correct) up to the rare case where two
    mistakes cancel (see the tests).
    """
    _check_model_problems(model, problems)
    logpc = model.log_probs(temperature)[:, CORRECT]                       # (C,)
    ctx = problems.context
    per_step = np.where(ctx >= 0, logpc[np.where(ctx >= 0, ctx, 0)], 0.0)  # (P, L)
    return np.exp(per_step.sum(1))


def pass1_exact(model, problems, temperature=1.0):
    r"""Expected pass@1 without sampling: the mean over problems of :func:`p_solve`."""
    _check_model_problems(model, problems)
    if len(problems) == 0:
        raise ValueError("problems must hold at least one problem")
    return float(p_solve(model, problems, temperature).mean())


def step_entropy(model, problems=None, temperature=1.0):
    """Policy entropy (nats): per context (C,) if ``problems`` is None, else the mean over all
    steps of ``problems`` (each step weighs once)."""
    instance(model, Model, "model")
    if problems is not None:
        instance(problems, Problems, "problems")
    h = metrics.entropy(model.probs(temperature))                            # (C,)
    if problems is None:
        return h
    ctx = problems.context
    return float(h[ctx[ctx >= 0]].mean())
