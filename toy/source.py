"""``toy.show(fn)``: display a toy function's source in a notebook, so the lesson's lines are
visible while the code lives once, in the package."""
import inspect
import textwrap

__all__ = ["show"]


class _Source:
    def __init__(self, src):
        self.src = src

    def _repr_markdown_(self):
        return "```python\n" + self.src + "```"

    def __repr__(self):
        return self.src


def show(obj):
    """Source of a function/class as a highlighted code block (plain text in a terminal)."""
    return _Source(textwrap.dedent(inspect.getsource(obj)))
