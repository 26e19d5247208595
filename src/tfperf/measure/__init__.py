"""The instruments every chapter and check measures with.

- ``instrument``: ``Patches``: patch TensorFlow functions while counting (install on first entry,
  restore on last), and notice when a patch is undone.
- ``value_shapes``: ``waits(op, inputs, attrs)``: whether an eager op (or a ``tf.function`` call) waited for a device
  value to size what it made or to branch, by TensorFlow's shape inference; ``to_host``: text or datasets of one.
- ``host_syncs``: ``counting()``: host reads of tensor values (the sync points) and NumPy uploads in a block.
- ``traces``: ``counting()``: the traces of every ``tf.function`` in a block.
- ``op_counts``: ``counting()``: the ops and tf.function graphs that run in a block (TensorFlow's op callbacks).
- ``dataset_graph``: ``stages(ds)``: the stages of a ``tf.data`` pipeline, read from the dataset's own graph.
- ``timing``: the only module that reads a clock: ``measure()``, ``compare()`` (interleaved
  pairs, median ratio and spread), ``stopwatch()``.
- ``monitor``: device utilization sampled in the background (NVML, or process CPU use).
- ``pipeline_timeline``: when each element of a pipeline was produced and consumed, and a plot of it.
- ``pipeline_alone``: ``pull(iterator)``: what a tf.data pipeline's batches cost taken alone (wall and CPU time).
- ``ceilings``: ``measure()``: the device card, this device's measured ceilings (matmul FLOP/s per dtype, memory
  and copy bandwidth, per-call overheads).
- ``flops``: ``dense_train_step(batch, layer_sizes)``: the matmul FLOPs of a dense network's train step.
- ``bytes_moved``: ``bytes_moved(fn, args)``: the bytes a step moves per call, from its graph op by op or from
  XLA's compiled module.
- ``step_memory``: ``step_memory(fn, args)``: the bytes XLA allocates for one call of a compiled step, from its buffer
  assignment.
- ``graph_dtypes``: ``matmul_dtypes(names)``: the dtypes of the matrix products in ``tf.function`` graphs that ran.
- ``profile_analysis``: ``input_wait(capture, seconds)``: the TensorFlow Profiler's own analysis of a capture (XProf's
  input-pipeline analyzer): how long the run waited for its tf.data input.
"""
