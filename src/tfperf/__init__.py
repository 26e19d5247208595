"""Helper library of the course "TensorFlow performance on the GPU, learned by measuring it".

Modules, bottom to top (each imports only those listed before it; tests/unit/test_layers.py
checks it):

- ``logs``: keep TensorFlow's log noise and warnings out of graded cells.
- ``sizes``: the one switch between learner-scale and CI-scale experiments; sweep ladders.
- ``device``: what we run on, GPU memory growth, a health check, device sync.
- ``instrument``: patch TensorFlow functions while counting, and notice when a patch is undone.
- ``host_syncs``: count host reads of tensor values (the sync points) in a block.
- ``traces``: count the traces of every ``tf.function`` in a block.
- ``op_counts``: count the ops and tf.function graphs that run in a block (TensorFlow's op callbacks).
- ``dataset_graph``: the stages of a ``tf.data`` pipeline, read from the dataset's own graph.
- ``plots``: matplotlib helpers shared by the chapters.
- ``workspace``: the learner's own copies of the notebooks.
- ``authoring``: normalized notebooks and student versions in sync (for contributors).
- ``timing``: the only module that reads a clock.
- ``targets``: throughput targets per exercise and device class.
- ``monitor``: device utilization sampled in the background (NVML, or process CPU use).
- ``pipeline_timeline``: when each element of a pipeline was produced and consumed, and a plot of it.
- ``widgets``: one reusable experiment panel.
- ``experiments``: one module of timing experiments per chapter.
- ``grading``: the checks that the nbgrader tests call (a package, one module per kind).
- ``course``: what a notebook's setup cell calls.
- ``cli``: ``python -m tfperf doctor | calibrate | workspace``.

Importing the package does not import TensorFlow.
"""

__version__ = "0.1.0"
