"""Grading a whole class: ``python -m tfperf grade ASSIGNMENT`` (for instructors; docs/instructors.md).

One module per job: ``submissions`` (collect and check submissions, ``zip_collect``),
``cpusets`` (disjoint CPU sets and GPUs for parallel graders), ``ledger`` (what was graded,
per student: resumable, safe on a shared filesystem), ``batch`` (one nbgrader process per
student, in parallel on pinned CPU sets), ``report`` (the summary and its plots), and
``slurm`` (a Slurm array job whose tasks each run the command for a chunk of students).
"""
