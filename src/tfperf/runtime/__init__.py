"""Where the course runs (the bottom layer).

- ``checkout``: ``course_root()``, the folder of the course's checkout.
- ``logs``: TensorFlow imported quietly; ``captured_stderr()`` (Python, file-descriptor level,
  warnings, logging) keeps graded cells' stderr clean; the noise pattern nbgrader ignores.
- ``sizes``: the ``TFPERF_SIZE`` switch (``full`` / ``ci``), ``pick(full=, ci=)``, sweep ladders.
- ``device``: ``detect()``, ``device_class()``, ``compute_device()``, ``enable_memory_growth()``,
  ``sync()`` (waits for GPU streams and for asynchronous eager work), ``health_check()``.
"""
