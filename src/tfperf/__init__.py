"""Helper library of the course "TensorFlow performance on the GPU, learned by measuring it".

Modules, bottom to top: each imports only those listed before it (tests/unit/test_layers.py
checks it). This is the one list of the library's layers; docs/contributing.md points here.

- ``checkout``: ``course_root()``, the folder of the course's checkout.
- ``source``: ``show(fn, ...)``: a library function's source, highlighted, next to what a notebook measures.
- ``logs``: TensorFlow imported quietly; ``captured_stderr()`` (Python, file-descriptor level,
  warnings, logging) keeps graded cells' stderr clean; the noise pattern nbgrader ignores.
- ``sizes``: the ``TFPERF_SIZE`` switch (``full`` / ``ci``), ``pick(full=, ci=)``, sweep ladders.
- ``device``: ``detect()``, ``device_class()``, ``compute_device()``, ``enable_memory_growth()``,
  ``sync()`` (waits for GPU streams and for asynchronous eager work), ``health_check()``.
- ``instrument``: ``Patches``: patch TensorFlow functions while counting (install on first entry,
  restore on last), and notice when a patch is undone.
- ``host_syncs``: ``counting()``: host reads of tensor values (the sync points) and NumPy uploads in a block.
- ``traces``: ``counting()``: the traces of every ``tf.function`` in a block.
- ``op_counts``: ``counting()``: the ops and tf.function graphs that run in a block (TensorFlow's op callbacks).
- ``dataset_graph``: ``stages(ds)``: the stages of a ``tf.data`` pipeline, read from the dataset's own graph.
- ``plots``: ``Run`` (one run's settings and records), ``show(draw, runs)``, ``plot_lines`` (a group keeps
  its colour in every run), ``legend`` (groups and runs, not every line), ``plot_bars``, ``plot_grouped_barh``, ``each_run``.
- ``workspace``: the learner's own copies of the notebooks in ``my-work/`` (never overwritten).
- ``timing``: the only module that reads a clock: ``measure()``, ``compare()`` (interleaved
  pairs, median ratio and spread), ``stopwatch()``.
- ``targets`` (+ ``targets.toml``): throughput targets per exercise and device class.
- ``monitor``: device utilization sampled in the background (NVML, or process CPU use).
- ``pipeline_timeline``: when each element of a pipeline was produced and consumed, and a plot of it.
- ``widgets``: ``ExperimentPanel``, the one reusable experiment panel.
- ``experiments``: one module of timing experiments per chapter (records in, plots out).
- ``grading``: the checks that the nbgrader tests call (a package, one module per kind);
  every failure says what was measured, what was expected, and which section to reread.
- ``course``: ``start()``, what a notebook's setup cell calls.
- ``screening``: ``ScreenAnswers``, the static screen of answer cells (``grading.screen``) as an
  nbgrader preprocessor (for instructors).
- ``launch``: Colab and Binder links, Colab metadata and the setup cell, built from the one configured
  repository and ref (``pyproject.toml``'s ``[tool.tfperf.launch]``; for contributors).
- ``nblint``: named rules every notebook follows (for contributors).
- ``authoring``: ``python -m tfperf.authoring normalize | release | check | lint | launch`` (for contributors).
- ``sandbox``: ``python -m tfperf.sandbox install | check``: the kernel nbgrader grades in,
  sandboxed with bubblewrap (read-only system and course, no network, CPU and memory limits).
- ``autograding``: nbgrader steps that keep honest work: ``GradingExecute`` (a dying kernel costs
  the rest of its notebook only), ``RestoreCells`` (instructor cells and their metadata restored).
- ``recheck``: ``python -m tfperf recheck SUBMISSION``: a submission's speed checks timed again out of
  its kernel (the unfixed code, the answer (sandboxed) and the clock in three processes).
- ``classgrading``: ``python -m tfperf grade``'s parts (for instructors): collect and check submissions,
  CPU sets for parallel graders, the resumable ledger, one nbgrader process per student, the summary,
  and ``classgrading.slurm``, the Slurm array job that grades a class on a cluster.
- ``report``: ``make_report()``: every chapter's reference notebook run on this device, and one
  Markdown report of what it measured (machine, printed measurements, plots, records, speed-check ratios).
- ``cli``: ``python -m tfperf doctor | calibrate | workspace | report | recheck | grade``.

Widgets never import experiments: the notebook wires a panel to an experiment function.
Importing the package does not import TensorFlow.
"""

__version__ = "0.1.0"
