"""Tests of toy.tinylm.task: the verifier (string and vectorised) on hand-made answers, the
tokenizer, the teacher's statistics, problems of varying length."""
import re

import numpy as np
import pytest

from toy.tinylm import task


def test_verifier_on_hand_made_strings():
    d = [9, 4, 5, 8, 0, 7, 3, 0, 2, 1]                       # sum 39 → 9
    assert task.verify("#9$", d) == 1.0
    assert task.verify("[9386636689]#9$", d) == 1.0         # the lecture's example chain
    assert task.verify("[0000000000]#9$", d) == 1.0         # only the final digit is rewarded
    assert task.verify("#9$$$$", d) == 1.0                  # padding after '$' is ignored
    for wrong in ("#8$", "[9386636689]#8$"):
        assert task.verify(wrong, d) == 0.0
    for bad in ("", "9", "#9", "#$", "#99$", "[938663668]#9$", "[93866366899]#9$", "[9386636689#9$",
                "9386636689]#9$", "[938663668a]#9$", "[9386636689]9$", "=#9$", "$#9$", None, 9):
        assert task.verify(bad, d) == 0.0, bad


def test_parse_and_chain():
    assert task.parse_answer("[9386636689]#9$") == ("think", 9, "9386636689")
    assert task.parse_answer("#3$") == ("direct", 3, None)
    assert task.parse_answer("#3") == ("malformed", None, None)
    d = np.array([[9, 4, 5, 8, 0, 7, 3, 0, 2, 1]])
    assert "".join(map(str, task.running_sums(d)[0])) == "9386636689"
    v = task.verify_batch(["[9386636689]#9$", "[9386636680]#0$", "#9$", "xx"], np.repeat(d, 4, 0))
    assert v["reward"].tolist() == [1, 0, 1, 0]
    assert v["chain_ok"].tolist() == [1, 0, 0, 0]
    assert v["think"].tolist() == [1, 1, 0, 0]
    assert v["length"].tolist() == [15, 15, 3, 2]


def test_verify_tokens_matches_verify_batch():
    """The vectorised verifier against the string one, on teacher, near-miss and random answers."""
    rng = np.random.default_rng(0)
    digits, _ = task.make_prompts(600, rng)
    good = task.teacher_answers(digits[:200], rng)
    near = [a[:-1] + "#" if i % 3 == 0 else a.replace("]", "0", 1) if i % 3 == 1 else "[" + a
            for i, a in enumerate(task.teacher_answers(digits[200:400], rng))]
    rand = ["".join(rng.choice(list(task.VOCAB), size=rng.integers(1, 17))) for _ in range(200)]
    answers = good + near + rand
    L = max(len(a) for a in answers)
    toks = np.full((600, L), task.EOS)                        # padded with '$' as generate does
    for i, a in enumerate(answers):
        toks[i, :len(a)] = task.encode(a)
    v1 = task.verify_batch([task.decode(t) for t in toks], digits)
    v2 = task.verify_tokens(toks, digits)
    for k in v1:
        np.testing.assert_array_equal(v1[k], v2[k], err_msg=k)
    assert v1["reward"][:200].mean() > 0.5 and 0 < v1["reward"][200:].mean() < 0.5


def test_tokenizer_roundtrip_and_errors():
    s = "0123456789=[9]#9$"
    assert task.decode(task.encode(s)) == s
    with pytest.raises(ValueError, match="s contains"):
        task.encode("12a")
    with pytest.raises(ValueError, match="n must"):
        task.make_prompts(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="digits"):
        task.true_answers([[1, 2, 3]])


def test_teacher_statistics():
    rng = np.random.default_rng(0)
    digits, _ = task.make_prompts(4000, rng)
    ans = task.teacher_answers(digits, rng)
    v = task.verify_batch(ans, digits)
    think = v["think"] > 0
    assert abs(think.mean() - 0.5) < 0.03
    assert v["reward"][~think].mean() == 1.0                 # direct answers are right
    assert abs(v["chain_ok"][think].mean() - task.TEACHER_CHAIN_ACC) < 0.03
    # the teacher's final answer is its chain's last digit (errors carry on)
    for a in ans[:200]:
        fmt, final, chain = task.parse_answer(a)
        assert fmt == "direct" or final == int(chain[-1])
    # with a perfect teacher every chain is right
    ans0 = task.teacher_answers(digits[:100], rng, think_prob=1.0, error_rate=0.0)
    assert task.verify_batch(ans0, digits[:100])["chain_ok"].all()


# ----------------------------------------------------------------------------- problems of varying length
def test_decode_rows_matches_decode():
    ids = np.random.default_rng(0).integers(0, 15, size=(50, 16))
    assert task.decode_rows(ids) == [task.decode(r) for r in ids]
    with pytest.raises(ValueError, match="ids"):
        task.decode_rows(np.array([[15]]))


def test_make_prompts_with_varying_length():
    d10, p10 = task.make_prompts(50, np.random.default_rng(3))
    np.testing.assert_array_equal(d10, np.random.default_rng(3).integers(0, 10, size=(50, 10)))  # unchanged
    d, p = task.make_prompts(2000, np.random.default_rng(3), min_digits=4)
    k = task.n_digits(d)
    assert set(np.unique(k)) == set(range(4, 11))
    for row, prow, kk in zip(d[:50], p[:50], k[:50]):
        assert np.all(row[kk:] == task.PAD) and np.all(row[:kk] >= 0)
        assert task.decode(prow) == "".join(map(str, row[:kk])) + "$" * (10 - kk) + "="


def test_short_problem_by_hand():
    d = np.array([[9, 4, 5, 8] + [task.PAD] * 6])          # 9 + 4 + 5 + 8 = 26 → 6
    assert task.true_answers(d)[0] == 6 and task.n_digits(d)[0] == 4
    np.testing.assert_array_equal(task.running_sums(d)[0, :4], [9, 3, 8, 6])
    assert task.think_answer(task.running_sums(d)[0, :4]) == "[9386]#6$"
    assert task.decode(task.prompts_of(d)[0]) == "9458$$$$$$="
    assert task.verify("[9386]#6$", d) == 1.0 and task.verify("#6$", d) == 1.0
    assert task.verify("[9386000006]#6$", d) == 0.0            # ten chain digits for a 4-digit problem
    assert task.parse_answer("[9386]#6$", k=4)[0] == "think"
    assert task.parse_answer("[9386]#6$")[0] == "malformed"     # the 10-digit task needs 10


def test_verify_tokens_matches_verify_batch_on_varying_lengths():
    rng = np.random.default_rng(11)
    d, _ = task.make_prompts(300, rng, min_digits=3)
    answers = task.teacher_answers(d, rng)
    answers[::7] = ["[" + a[1:] if a.startswith("#") else a[:-3] + "#1$" for a in answers[::7]]
    answers[1::9] = [a[:3] + a[4:] for a in answers[1::9]]      # drop a chain digit: malformed
    ids = np.full((len(answers), 16), task.EOS)
    for i, a in enumerate(answers):
        e = task.encode(a)
        ids[i, :len(e)] = e
    fast, slow = task.verify_tokens(ids, d), task.verify_batch(answers, d)
    for key in slow:
        np.testing.assert_array_equal(fast[key], slow[key], err_msg=key)
    assert 0 < fast["think"].mean() < 1 and 0 < fast["chain_ok"].sum() < fast["think"].sum()


def test_teacher_on_short_problems():
    d, _ = task.make_prompts(200, np.random.default_rng(2), min_digits=2)
    answers = task.teacher_answers(d, np.random.default_rng(0), think_prob=1.0, error_rate=0.0)
    v = task.verify_batch(answers, d)
    assert np.all(v["think"] == 1) and np.all(v["chain_ok"] == 1) and np.all(v["reward"] == 1)
    np.testing.assert_array_equal(v["length"], task.n_digits(d) + 5)


@pytest.mark.parametrize("kwargs, arg", [({"min_digits": 0}, "min_digits"), ({"min_digits": 11}, "min_digits"),
                                         ({"min_digits": 2.5}, "min_digits")])
def test_make_prompts_bad_min_digits(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        task.make_prompts(3, np.random.default_rng(0), **kwargs)


def test_padding_only_on_the_left():
    with pytest.raises(ValueError, match="PAD"):
        task.true_answers(np.array([[1, task.PAD] + [2] * 8]))
    with pytest.raises(ValueError, match="PAD"):
        task.true_answers(np.array([[task.PAD] + [2] * 9]))
    with pytest.raises(ValueError, match="PAD"):
        task.true_answers(np.array([[task.PAD] * 10]))


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_RNG = np.random.default_rng(0)
_D = np.arange(10)[None] % 10
BAD_INPUTS = [
    (task.encode, (5,), {}, "s"),
    (task.encode, ("12x",), {}, "s"),
    (task.decode, ([1.5],), {}, "ids"),
    (task.decode, ([15],), {}, "ids"),
    (task.decode_rows, ([1, 2],), {}, "ids"),
    (task.make_prompts, (0, _RNG), {}, "n"),
    (task.make_prompts, (None, _RNG), {}, "n"),
    (task.make_prompts, (3, 0), {}, "rng"),
    (task.make_prompts, (3, _RNG), {"min_digits": 0}, "min_digits"),
    (task.make_prompts, (3, _RNG), {"min_digits": 2.5}, "min_digits"),
    (task.prompts_of, ([[1] * 9],), {}, "digits"),
    (task.prompts_of, ([[-1] + [1] * 9],), {}, "digits"),
    (task.n_digits, ([[1.5] * 10],), {}, "digits"),
    (task.parse_answer, ("#9$",), {"k": 0}, "k"),
    (task.true_answers, ([[1.5] * 10],), {}, "digits"),
    (task.true_answers, ([[1] * 9],), {}, "digits"),
    (task.running_sums, ([[10] * 10],), {}, "digits"),
    (task.think_answer, ([],), {}, "chain"),
    (task.think_answer, ([1] * 11,), {}, "chain"),
    (task.think_answer, ([12] * 10,), {}, "chain"),
    (task.direct_answer, (10,), {}, "answer"),
    (task.direct_answer, ("9",), {}, "answer"),
    (task.teacher_answers, (_D, _RNG), {"think_prob": "0.5"}, "think_prob"),
    (task.teacher_answers, (_D, _RNG), {"error_rate": 2}, "error_rate"),
    (task.teacher_answers, (_D, None), {}, "rng"),
    (task.verify, ("#9$", np.ones((2, 10), int)), {}, "digits"),
    (task.verify_batch, ("#9$", _D), {}, "answers"),
    (task.verify_batch, (["#9$", "#1$"], _D), {}, "answers"),
    (task.verify_tokens, ([[1, 2]], np.ones((2, 10), int)), {}, "ans"),
    (task.verify_tokens, ([[1, 20]], _D), {}, "ans"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)
