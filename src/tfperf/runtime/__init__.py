"""Where the course runs (the bottom layer).

- ``checkout``: ``course_root()``, the folder of the course's checkout.
- ``processes``: a process tree read from ``/proc``: ``tree()``, ``busy_seconds()`` (its CPU seconds),
  ``held_bytes()`` (the memory its objects hold), ``gpu_bytes()`` (on a GPU, through NVML); this process's
  ``resident_and_peak()``, ``reset_peak()``, ``return_large_frees()``.
- ``logs``: TensorFlow imported quietly; ``captured_stderr()`` (Python, file-descriptor level,
  warnings, logging) keeps graded cells' stderr clean; the noise pattern nbgrader ignores.
- ``sizes``: the ``TFPERF_SIZE`` switch (``full`` / ``ci``), ``pick(full=, ci=)``, sweep ladders.
- ``as_on_gpu``: the ``TFPERF_AS_ON_GPU`` switch: Keras's ``jit_compile="auto"`` resolved as on a GPU
  machine (XLA); ``tfperf.course.start()`` applies it.
- ``device``: ``detect()``, ``device_class()``, ``compute_device()``, ``enable_memory_growth()``,
  ``sync()`` (waits for GPU streams and for asynchronous eager work), ``health_check()``.
- ``replicas``: ``configure()``, the devices of N replicas of one model (real GPUs, a split GPU or logical CPUs),
  made before TensorFlow starts; ``strategy()``, one ``MirroredStrategy`` per set of devices.
- ``preloaded``: ``popen()``, the servers' and the cluster's processes forked from one launcher that imported
  TensorFlow once (about 2.5 s of a core saved a process).
- ``servers``: ``DataService``, the tf.data service (a dispatcher and its workers) in processes on loopback.
- ``cluster``: ``run_workers()``, a script run as the worker processes of one ``MultiWorkerMirroredStrategy``
  cluster (``TF_CONFIG``, free ports), none left running.
"""
