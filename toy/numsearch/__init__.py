"""Number Search, Part I's world: the game (``game``: the environment and tabular policies), its
exact answers (``exact``: J, ∇J, values and openings by dynamic programming), its trainers
(``train``: SFT, ReST, REINFORCE / baseline / RLOO / GRPO / Dr. GRPO through one weighted log-prob
loss; ``many``: the same trainers for many seeds at once) and its figures (``figures``).

``from toy import numsearch as ns`` gives the game's and the exact answers' public names
(``ns.rollout``, ``ns.exact_J``, ...); notebooks import ``from toy import numsearch as ns`` and
``from toy.numsearch import train as nt, many as nm``.
"""
from . import exact, game, many, train  # noqa: F401
from .exact import *  # noqa: F401,F403
from .game import *  # noqa: F401,F403

__all__ = ["game", "exact", "train", "many", *game.__all__, *exact.__all__]
