"""Number Search, Part I's world: the game (``game``: the environment, tabular policies, exact J
and ∇J), its trainers (``train``: SFT, ReST, REINFORCE / baseline / RLOO / GRPO / Dr. GRPO through
one weighted log-prob loss, vectorised over seeds) and its figures (``figures``).

``from toy import numsearch as ns`` gives the game's public names (``ns.rollout``, ``ns.exact_J``,
...); notebooks import ``from toy.numsearch import game as ns, train as nt``.
"""
from . import game, train  # noqa: F401
from .game import *  # noqa: F401,F403

__all__ = ["game", "train", *game.__all__]
