"""nbgrader's side of grading (for instructors): where and how submissions are executed and screened.

- ``sandbox``: ``python -m tfperf.autograding.sandbox install | check``: the kernel nbgrader grades in,
  sandboxed with bubblewrap (read-only system and course, no network, CPU and memory limits); and what a
  worker's answer may open once it runs (Linux Landlock): not its own memory or the rest of ``/proc`` beyond
  what TensorFlow reads.
- ``cells``: which cell of a notebook is what (answers, tests, exercises) and what a fresh process runs of it.
- ``check_kinds``: the kinds of check the grading process decides itself, one module each, in one table (prints:
  ``tfperf.grading.printing``; bytes: ``tfperf.grading.traffic``; speed: ``tfperf.grading.speed``), and what a
  worker reads for them on request (the traces of ``tfperf.grading.tracing`` too). Each kind's module holds its assertion, what a
  test cell asks of it, what the answer's worker reads for it and the grading process's decision.
- ``screen``: the static screen of answer cells: code that has no place in an answer.
- ``restricted``: how a worker runs an answer cell: compiled by RestrictedPython under the course's policy,
  with guarded attribute reads, writes, imports and builtins.
- ``worker``: ``python -m tfperf.autograding.worker``: the sandboxed process that runs one exercise (the
  instructor's cells, the answer (restricted), the test cells) and reports each test cell's outcome; then answers
  the judge's calls as data (the check's functions called back in the judge, the counters run over the calls) and
  the timed samples of the speed checks (the unfixed code's worker serves its samples the same way).
- ``recheck``: the unfixed code's worker of the speed checks timed out of the kernel; and ``python -m tfperf
  recheck SUBMISSION``, a submission's speed checks timed again (the unfixed code, the answer (sandboxed) and the
  clock in three processes).
- ``judge``: ``python -m tfperf.autograding.judge``: the process that runs an exercise's test cells where no
  learner code ever ran, the answer's functions called in the worker; which test cells it runs.
- ``forkserver``: ``ForkServer``: one sandboxed process that imported TensorFlow and the course once, and forks
  each exercise's worker from it (cleaned up after every exercise).
- ``preprocessors``: the course's steps in nbgrader: ``GradingExecute`` (a dying kernel costs the exercise it
  died in only), ``RestoreCells`` (instructor cells and their metadata restored), ``RefuseLinks`` and
  ``RemoveLinks`` (no submission reaches another student's files through a link), ``ScreenAnswers`` (the static
  screen: flagged answers lose their exercise), ``ClearSolutionsWithPlaceholders`` (releasing, an untouched
  top-level answer becomes placeholders that the Checks report as "not written yet").
- ``outside``: ``GradeOutsideKernel``: every written exercise graded again in a fresh sandboxed worker
  of its own (the instructor's cells, that answer, the instructor's tests), its speed checks timed
  from the grading process against the unfixed code's own worker, its prints checks watched and its bytes
  checks decided from there too; the kernel's outcome of a test cell counts for nothing.
- ``formgrader``: the instructor's Jupyter server extension: Formgrader's folder links open in JupyterLab.

The path of a grade, for an instructor reading why a test cell scored what it did: ``nbgrader autograde`` runs the
steps ``autograde/nbgrader_config.py`` lists; ``outside.GradeOutsideKernel`` grades each written exercise
(``outside.grade_exercise``): the *subject* (``worker``, forked by ``forkserver``, confined by ``sandbox``, the
answer run by ``restricted``) runs the answer and only answers; the *judge* (``judge``) runs the test cells it can,
calling the answer's functions in the subject; what is left is decided in the grading process, kind by kind
(``check_kinds``: one module each in ``tfperf.grading``, the speed checks timed by ``tfperf.grading.speed`` with the
one trial, ``tfperf.grading.speed_trial``, against the unfixed code's worker of ``recheck``). Last, where an
exercise's speed check tallies its work (chapter 5's training), a call that cell found wrong fails the exercise's
other cells too (``outside._wrong_on_any_call``).
"""
