"""Exercise checkers: ``toy.check.<exercise>(answer)`` prints ✓ or a specific hint, and returns a
``Result`` (truthy iff every case passes; ``passed``, ``total``, ``message``) that a grader can score.

Each part keeps its checkers in its own module; they are all re-exported here.
"""
from .part1 import *  # noqa: F401,F403
from .part2 import *  # noqa: F401,F403
from .part1_numsearch import *  # noqa: F401,F403
from .part3 import *  # noqa: F401,F403
