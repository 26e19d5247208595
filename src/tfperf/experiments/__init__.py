"""Timing experiments, one module per chapter.

Each experiment is a plain function: settings in, a list of records (dicts) out, with an
optional ``progress(done, total)`` callback. Nothing here depends on widgets; the
notebooks wire these functions to :class:`tfperf.widgets.ExperimentPanel`.
"""
