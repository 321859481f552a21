"""Pinning tests of toy.tinylm.evals on hand-made models whose answers are known, so that every
number ``evaluate``, ``pass_at_k_curve`` and ``thinking_budget`` return is computable by hand
or by a naive loop (enumeration of the k-subsets for pass@k)."""
import itertools
import math
import re

import numpy as np
import pytest

from toy.prob import sample_categorical
from toy.tinylm import model as M
from toy.tinylm import task
from toy.tinylm.evals import evaluate, pass_at_k_curve, thinking_budget

TINY = M.ModelConfig(n_layer=2, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)


def _tokens(answers):
    """Answer strings → (n, L) token ids padded with '$', as ``TinyLM.generate`` returns them."""
    L = max(len(a) for a in answers)
    return np.stack([np.concatenate([task.encode(a), np.full(L - len(a), task.EOS)]) for a in answers])


class Stub:
    """A model whose ``generate`` writes ``answer(row, digits)`` for every output row (rows
    grouped by prompt, ``n_repeat`` per prompt); it records its arguments."""

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def generate(self, prefix, max_new_tokens, rng=None, temperature=1.0, greedy=False, n_repeat=1):
        self.calls.append(dict(prefix=prefix.copy(), max_new_tokens=max_new_tokens, temperature=temperature,
                               greedy=greedy, n_repeat=n_repeat,
                               rng_state=None if rng is None else rng.bit_generator.state))
        digits = np.repeat(prefix[:, :task.N_DIGITS], n_repeat, axis=0)
        return _tokens([self.answer(r, d) for r, d in enumerate(digits)])


def five_kinds(r, d):
    """Row r % 5: 0 right direct, 1 wrong direct, 2 right chain, 3 wrong chain but right answer,
    4 malformed."""
    s = int(sum(d)) % 10
    chain = [int(x) for x in np.cumsum(d) % 10]
    bad = [(chain[0] + 1) % 10] + chain[1:]
    return [f"#{s}$", f"#{(s + 1) % 10}$", task.think_answer(chain),
            "[" + "".join(map(str, bad)) + f"]#{s}$", "9$"][r % 5]


def test_evaluate_by_hand():
    m = Stub(five_kinds)
    e = evaluate(m, n_prompts=20, temperature=0.7, seed=3)
    # 4 rows of each kind: right = kinds 0, 2, 3; think-first = kinds 2, 3 (one chain right)
    assert e == pytest.approx({"accuracy": 12 / 20, "think_share": 8 / 20, "acc_think": 1.0,
                               "acc_direct": 0.5, "chain_acc": 0.5, "malformed": 4 / 20,
                               "mean_length": (4 * 3 + 4 * 3 + 4 * 15 + 4 * 15 + 4 * 2) / 20})
    # the problems are make_prompts(n) of a fresh generator seeded with ``seed``, which then samples
    rng = np.random.default_rng(3)
    _, prompts = task.make_prompts(20, rng)
    call = m.calls[0]
    np.testing.assert_array_equal(call["prefix"], prompts)
    assert call["rng_state"] == rng.bit_generator.state
    assert (call["temperature"], call["greedy"], call["max_new_tokens"]) == (0.7, False, task.MAX_ANSWER_LEN)
    evaluate(m, n_prompts=20, greedy=True)
    assert m.calls[-1]["greedy"] is True


def test_evaluate_given_digits_and_empty_formats():
    digits = np.array([[1] * 10, [2] * 10, [9] * 10])              # answers 0, 0, 0
    e = evaluate(Stub(lambda r, d: "#0$"), digits=digits)
    assert e["accuracy"] == 1.0 and e["think_share"] == 0.0 and e["malformed"] == 0.0
    assert math.isnan(e["acc_think"]) and math.isnan(e["chain_acc"]) and e["acc_direct"] == 1.0
    e = evaluate(Stub(lambda r, d: "#0$" if r == 1 else "#1$"), digits=digits)
    assert e["accuracy"] == pytest.approx(1 / 3) and e["mean_length"] == 3.0


def _naive_pass_at_k(right, k):
    """Share of the k-subsets of one problem's samples that contain a right one."""
    subsets = list(itertools.combinations(range(len(right)), k))
    return sum(any(right[i] for i in s) for s in subsets) / len(subsets)


def test_pass_at_k_curve_by_enumeration():
    n_prompts, n_samples = 7, 4
    n_right = [0, 1, 2, 3, 4, 0, 3]                           # problem j: its first n_right[j] samples right

    def answer(r, d):
        j, q = divmod(r, n_samples)
        s = int(sum(d)) % 10
        return f"#{s if q < n_right[j] else (s + 1) % 10}$"

    m = Stub(answer)
    got = pass_at_k_curve(m, ks=(1, 2, 3, 4), n_prompts=n_prompts, n_samples=n_samples, temperature=1.3, seed=5)
    right = [[q < c for q in range(n_samples)] for c in n_right]
    ref = {k: float(np.mean([_naive_pass_at_k(r, k) for r in right])) for k in (1, 2, 3, 4)}
    assert got == pytest.approx(ref, rel=1e-12)
    assert got[1] == pytest.approx(13 / 28) and got[4] == pytest.approx(5 / 7)   # by hand
    call = m.calls[0]
    assert (call["n_repeat"], call["temperature"]) == (n_samples, 1.3)
    rng = np.random.default_rng(5)
    _, prompts = task.make_prompts(n_prompts, rng)
    np.testing.assert_array_equal(call["prefix"], prompts)
    assert call["rng_state"] == rng.bit_generator.state


class BudgetStub(Stub):
    """``generate`` writes the right chain; ``forward`` answers with the last chain digit it is
    shown (digit 0 with no chain) with logit ``gap``, every other digit 0, and a larger logit
    on '$' (which ``thinking_budget`` must ignore: the answer is restricted to digits)."""

    def __init__(self, gap):
        super().__init__(lambda r, d: "".join(str(x) for x in np.cumsum(d) % 10))
        self.gap, self.shown = gap, []

    def forward(self, cut):
        P = task.PROMPT_LEN + 1                                   # prompt, '=' and '['
        assert (cut[:, P - 1] == task.STOI["["]).all()
        assert (cut[:, -2] == task.STOI["]"]).all() and (cut[:, -1] == task.STOI["#"]).all()
        b = cut.shape[1] - P - 2
        self.shown.append(cut[:, P:P + b].copy())
        ans = cut[:, P + b - 1] if b else np.zeros(len(cut), int)
        logits = np.zeros(cut.shape + (len(task.VOCAB),))
        logits[np.arange(len(cut)), -1, ans] = self.gap
        logits[:, -1, task.EOS] = self.gap + 5
        return logits


def test_thinking_budget_greedy_by_hand():
    m = BudgetStub(gap=3.0)
    got = thinking_budget(m, budgets=range(11), n_prompts=50, greedy=True, seed=2)
    digits, _ = task.make_prompts(50, np.random.default_rng(2))
    for b in range(11):                                           # right iff sum of b digits ≡ all 10
        ref = np.mean([(sum(d[:b]) if b else 0) % 10 == sum(d) % 10 for d in digits])
        assert got[b] == pytest.approx(ref), b
        np.testing.assert_array_equal(m.shown[b], np.cumsum(digits, axis=1)[:, :b] % 10)
    assert got[10] == 1.0 and got[0] < 0.3
    call = m.calls[0]
    assert call["greedy"] is True and call["max_new_tokens"] == task.N_DIGITS
    np.testing.assert_array_equal(call["prefix"][:, -1], task.STOI["["])


def test_thinking_budget_sampled_reproduced():
    """Sampling at temperature T: p ∝ exp(logit / T) over the ten digits, drawn with the same
    generator after the problems (the stub's generate draws nothing)."""
    T = 2.0
    got = thinking_budget(BudgetStub(gap=3.0), budgets=[0, 4, 10], n_prompts=400, temperature=T, seed=1)
    rng = np.random.default_rng(1)
    digits, _ = task.make_prompts(400, rng)
    e = math.exp(3.0 / T)
    for b in (0, 4, 10):
        shown = (np.cumsum(digits, axis=1)[:, b - 1] % 10) if b else np.zeros(400, int)
        p = np.full((400, 10), 1 / (e + 9))
        p[np.arange(400), shown] = e / (e + 9)
        ans = sample_categorical(p, rng)
        assert got[b] == pytest.approx(np.mean(ans == digits.sum(axis=1) % 10)), b
    assert got[10] == pytest.approx(e / (e + 9), abs=0.08)       # ≈ P(the shown digit is drawn)


def test_evaluation_helpers_run():
    m = M.TinyLM(TINY, seed=0)
    e = evaluate(m, n_prompts=20)
    assert 0 <= e["accuracy"] <= 1 and e["think_share"] + e["malformed"] <= 1
    p = pass_at_k_curve(m, ks=(1, 4), n_prompts=5, n_samples=4)
    assert set(p) == {1, 4} and p[1] <= p[4]
    b = thinking_budget(m, budgets=[0, 10], n_prompts=10)
    assert set(b) == {0, 10}


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_LM = M.TinyLM(TINY, seed=0)
BAD_INPUTS = [
    (evaluate, (_LM,), {"n_prompts": 0}, "n_prompts"),               # was reported as n
    (evaluate, (_LM,), {"temperature": "1"}, "temperature"),
    (evaluate, (_LM,), {"seed": None}, "seed"),
    (evaluate, (_LM,), {"digits": [[1] * 9]}, "digits"),
    (evaluate, ("model",), {}, "model"),
    (pass_at_k_curve, (_LM,), {"ks": (1, 32)}, "ks"),
    (pass_at_k_curve, (_LM,), {"ks": (0,)}, "ks"),
    (pass_at_k_curve, (_LM,), {"ks": ()}, "ks"),
    (pass_at_k_curve, (_LM,), {"n_prompts": 0}, "n_prompts"),
    (pass_at_k_curve, (_LM,), {"n_samples": None}, "n_samples"),
    (thinking_budget, (_LM,), {"budgets": [11]}, "budgets"),
    (thinking_budget, (_LM,), {"budgets": [2.5]}, "budgets"),
    (thinking_budget, (_LM,), {"n_prompts": -1}, "n_prompts"),
    (thinking_budget, (_LM,), {"temperature": 0}, "temperature"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)
