"""``toy.show(fn)``: display a toy function's source in a notebook, so the lesson's lines are
visible while the code lives once, in the package."""
import inspect
import re
import textwrap

__all__ = ["show"]

#: a source line ending with this comment starts an input check (the line and the lines indented
#: below it): it guards the API, not the lesson, so ``show`` leaves it out (prefer keeping the checks
#: apart: ``toy._check_args.checked``, whose decorator line ``show`` leaves out too)
CHECK_MARK = "# argcheck"
DECORATOR = re.compile(r"@(\w+\.)*checked\(")


class _Source:
    def __init__(self, src):
        self.src = src

    def _repr_markdown_(self):
        return "```python\n" + self.src + "```"

    def __repr__(self):
        return self.src


def show(obj):
    """Source of a function/class as a highlighted code block (plain text in a terminal): the
    equation, without its ``@checked(...)`` decorator or input-check lines marked ``# argcheck``."""
    if not (inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isclass(obj)
            or inspect.ismodule(obj)):
        raise ValueError(f"obj must be a function, method, class or module, got {type(obj).__name__}")
    out, skip_below = [], None                  # skip_below: indent of the check being skipped
    for line in textwrap.dedent(inspect.getsource(obj)).splitlines(keepends=True):
        indent = len(line) - len(line.lstrip())
        if skip_below is not None and (indent > skip_below or not line.strip()):
            continue
        skip_below = indent if line.rstrip().endswith(CHECK_MARK) or DECORATOR.match(line.lstrip()) else None
        if skip_below is None:
            out.append(line)
    return _Source("".join(out).rstrip("\n") + "\n")
