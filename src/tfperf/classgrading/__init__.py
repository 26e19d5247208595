"""Grading a whole class: ``python -m tfperf grade ASSIGNMENT`` (for instructors; docs/instructors.md).

Modules, bottom to top (each imports only those listed before it):

- ``cpusets``: disjoint CPU sets and GPUs for parallel graders.
- ``ledger``: what was graded, per student: resumable, safe on a shared filesystem.
- ``slurm``: a Slurm array job whose tasks each run the command for a chunk of students.
- ``submissions``: collect and check submissions, ``zip_collect``.
- ``beliefs``: the class's predictions against its measurements, from the submitted notebooks (never graded).
- ``report``: the summary and its plots.
- ``batch``: one nbgrader process per student, in parallel on pinned CPU sets.
- ``lms``: the gradebook's scores as the CSV that Canvas's or Moodle's gradebook imports (``tfperf export``).
"""
