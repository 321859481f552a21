"""Part II's world, the arithmetic toy LLM, as one package:

- :mod:`toy.arith.model`   problems, methods, the 15-"neuron" model, sampling and verifying
  (its names are re-exported here: ``from toy import arith; arith.Model()``);
- :mod:`toy.arith.train`   STaR (``train_sft``, ``star``), REINFORCE and GRPO / DAPO, each with
  its ``*_seeds`` for several seeds;
- :mod:`toy.arith.variant` the two-correct-methods world of §II.6;
- :mod:`toy.arith.figures` the section-specific figures (imported on its own: it loads matplotlib).

Notebooks import ``from toy import arith`` and ``from toy.arith import train as arith_train``.
"""
from . import model, train, variant  # noqa: F401
from .model import *  # noqa: F401,F403
from .model import __all__  # noqa: F401
