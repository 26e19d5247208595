"""Helper library of the course "TensorFlow performance on the GPU, learned by measuring it".

Modules, bottom to top (each imports only those listed before it):

- ``logs``: keep TensorFlow's log noise and warnings out of graded cells.
- ``sizes``: the one switch between learner-scale and CI-scale experiments.
- ``device``: what we run on, GPU memory growth, a health check, device sync.
- ``host_syncs``: count host reads of tensor values (the sync points) in a block.
- ``plots``: matplotlib helpers shared by the chapters.
- ``timing``: the only module that reads a clock.
- ``targets``: throughput targets per exercise and device class.
- ``monitor``: device utilization sampled in the background (NVML, or process CPU use).
- ``widgets``: one reusable experiment panel.
- ``experiments``: one module of timing experiments per chapter.
- ``grading``: the assertions that the nbgrader tests call.
- ``course``: what a notebook's setup cell calls.
- ``cli``: ``python -m tfperf doctor | calibrate``.

Importing the package does not import TensorFlow.
"""

__version__ = "0.1.0"
