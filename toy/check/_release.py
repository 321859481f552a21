"""``without(module, *names, **replace)``: a view of a module without some of its functions.

The instructor kit's released notebooks (``instructor_kit/make_assignments.py``) use it where the book
imports a module that holds an exercise's answer under another name (``rl.clipped_surrogate_grad``
is §II.4's ``clipped_grad``): ``rl = without(rl, "clipped_surrogate_grad")``. Everything else
reads through to the module itself; the hidden names raise an ``AttributeError`` that says why.
(It hides, it does not forbid: an answer that uses the library's implementation anyway scores 0
in the autograded test cell.)
"""
import types

__all__ = ["without"]


class _View(types.ModuleType):
    def __init__(self, module, hidden, replace):
        super().__init__(module.__name__, module.__doc__)
        object.__setattr__(self, "_view", (module, frozenset(hidden), dict(replace)))

    def __getattr__(self, name):
        module, hidden, replace = object.__getattribute__(self, "_view")
        if name in hidden:
            raise AttributeError(f"{module.__name__}.{name} is the answer to an exercise of this assignment, "
                                 "so it is hidden here: write your own")
        if name in replace:
            return replace[name]
        return getattr(module, name)

    def __dir__(self):
        module, hidden, replace = object.__getattribute__(self, "_view")
        return sorted((set(dir(module)) | set(replace)) - hidden)

    def __repr__(self):
        module, hidden, _ = object.__getattribute__(self, "_view")
        return f"<module {module.__name__!r} without {', '.join(sorted(hidden))}>"


def without(module, *names, **replace):
    """A view of ``module`` in which ``names`` do not exist and ``replace`` maps names to other
    objects (``toy = without(toy, rl=rl_view)``)."""
    if not isinstance(module, types.ModuleType):
        raise ValueError(f"module must be a module, got {type(module).__name__}")
    if not all(isinstance(n, str) and hasattr(module, n) for n in names):
        raise ValueError(f"names must be attributes of {module.__name__}, got {names!r}")
    return _View(module, names, replace)
