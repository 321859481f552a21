"""Tests of toy.tinylm.rewards: hand-made strings with answers checkable by eye, and an
independent regular-expression reference on teacher, near-miss and random strings."""
import re

import numpy as np
import pytest

from toy.tinylm import rewards, task

D = [9, 4, 5, 8, 0, 7, 3, 0, 2, 1]                       # sum 39 → answer 9, chain 9386636689


def test_hand_made_strings():
    answers = ["[9386636689]#9$",    # right chain, right answer, consistent
               "[9386636680]#0$",    # a slip in the last step: consistent, wrong
               "[9386636680]#9$",    # wrong chain but the right digit: inconsistent, right
               "[0000000000]#9$",    # nonsense chain, right digit: inconsistent
               "#9$",                # direct, right
               "#8$",                # direct, wrong
               "[938663668]#8$",     # nine digits: malformed
               "[9386636689]#9$$$",  # padding after '$' is ignored
               "[9386636689]#9"]     # no end token: malformed
    fmt = rewards.format_reward(answers)
    con = rewards.consistency_reward(answers)
    np.testing.assert_array_equal(fmt, [1, 1, 1, 1, 0, 0, 0, 1, 0])
    np.testing.assert_array_equal(con, [1, 1, 0, 0, 0, 0, 0, 1, 0])
    digits = np.repeat([D], len(answers), axis=0)
    acc = np.array([task.verify(a, D) for a in answers])
    np.testing.assert_array_equal(acc, [1, 0, 1, 1, 1, 0, 0, 1, 0])
    total = rewards.shaped_reward(answers, digits, w_format=0.1, w_consistency=0.2)
    np.testing.assert_allclose(total, acc + 0.1 * fmt + 0.2 * con)
    np.testing.assert_allclose(total[:4], [1.3, 0.3, 1.1, 1.1])
    np.testing.assert_array_equal(rewards.shaped_reward(answers, digits), acc)   # weights 0


def _ref_format(a):
    m = re.match(r"\[(\d{10})\]#(\d)\$", a)
    return m is not None and m.end() == a.find("$") + 1


def _ref_consistent(a):
    m = re.match(r"\[(\d{10})\]#(\d)\$", a)
    return _ref_format(a) and m.group(1)[-1] == m.group(2)


def test_against_a_regex_reference():
    rng = np.random.default_rng(0)
    digits, _ = task.make_prompts(300, rng)
    teacher = task.teacher_answers(digits[:100], rng)
    # near misses: change the final digit, drop a chain digit, break a bracket
    near = [a[:-2] + str((int(a[-2]) + 1) % 10) + "$" if i % 3 == 0 else a[:3] + a[4:] if i % 3 == 1
            else a.replace("]", "[", 1) for i, a in enumerate(task.teacher_answers(digits[100:200], rng))]
    rand = ["".join(rng.choice(list(task.VOCAB), size=rng.integers(1, 17))) for _ in range(100)]
    answers = teacher + near + rand
    np.testing.assert_array_equal(rewards.format_reward(answers), [_ref_format(a) for a in answers])
    np.testing.assert_array_equal(rewards.consistency_reward(answers), [_ref_consistent(a) for a in answers])
    # the teacher always answers with its chain's last digit
    t = rewards.format_reward(teacher) > 0
    assert t.any() and rewards.consistency_reward(teacher)[t].all()
    # near misses of kind 0 (changed final digit) are well formed but inconsistent
    k0 = [a for i, a in enumerate(near) if i % 3 == 0 and a.startswith("[")]
    assert rewards.format_reward(k0).all() and not rewards.consistency_reward(k0).any()


def test_bad_input():
    with pytest.raises(ValueError, match="answers"):
        rewards.format_reward("#9$")
    with pytest.raises(ValueError, match="w_format"):
        rewards.shaped_reward(["#9$"], [D], w_format=-1)
    assert rewards.consistency_reward([None, 9, ""]).tolist() == [0, 0, 0]


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
BAD_INPUTS = [
    (rewards.format_reward, ("#9$",), {}, "answers"),
    (rewards.consistency_reward, ("#9$",), {}, "answers"),
    (rewards.shaped_reward, ("#9$", [D]), {}, "answers"),
    (rewards.shaped_reward, (["#9$"], [D]), {"w_format": -1}, "w_format"),
    (rewards.shaped_reward, (["#9$"], [D]), {"w_format": "1"}, "w_format"),
    (rewards.shaped_reward, (["#9$"], [D]), {"w_consistency": None}, "w_consistency"),
    (rewards.shaped_reward, (["#9$"], [D[:9]]), {}, "digits"),
    (rewards.shaped_reward, (["#9$", "#9$"], [D]), {}, "answers"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)
