"""The instructor kit of *RL for Reasoning, by Hand*, kept apart from the teaching package ``toy``:

- ``make_assignments.py`` (``make assignments``): the nbgrader course, one assignment per section
  with exercises, its test cells and hidden cases (``hidden_cases.py``);
- ``grading.py``: the engine an nbgrader test cell loads from the installed files (per-case
  credit, tamper checks), never through the notebook's ``toy``;
- ``grade.py`` (``make grade``): collect, autograde, export grades and feedback;
- ``grade_demo.py`` (``make grade-demo``, in CI): eight submissions graded end to end.

``docs/instructors.md`` is the guide. The scripts run with ``.venv-instructor/bin/python``.
"""
