"""Timing experiments, one module per chapter.

Each experiment is a plain function: settings in, a list of records (dicts) out, with an
optional ``progress(done, total)`` callback. Nothing here depends on widgets; the
notebooks wire these functions to :class:`tfperf.lesson.widgets.ExperimentPanel`.
The chapters' modules do not import one another, but for chapter 6's memory experiments, which train chapter 2's
MLP (``eager_vs_graph``) again:

- ``tensors_and_devices``: chapter 1.
- ``eager_vs_graph``: chapter 2.
- ``keras_fit``: chapter 3.
- ``tf_data``: chapter 4.
- ``gpu_sync``: chapter 5.
- ``device_ceilings``: chapter 6.
- ``beyond_one_device``: chapter 7: its data, the layer that notes where a model ran, and
  what replication costs (step time, throughput and the all-reduce for 1..N replicas), the tf.data service's
  steady throughput against its workers.
- ``capstone``: chapter 8 (the capstone): a training script with several pitfalls, its fixes and its variants.
"""
