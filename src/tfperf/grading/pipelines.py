"""Checks of ``tf.data`` pipelines: what they deliver per epoch, and how they are built.

The structure is read from the dataset's own graph (:mod:`tfperf.measure.dataset_graph`), not
from source text: a stage counts where it runs, whatever the code that built it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread
from tfperf.measure import dataset_graph


def _epoch_arrays(epoch: Sequence[Any]) -> list[np.ndarray]:
    return [np.asarray(t.numpy() if hasattr(t, "numpy") else t) for t in epoch]


@guard.checked
def check_same_epochs(
    got: Sequence[Any],
    expected: Sequence[Any],
    *,
    what: str,
    section: str | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """Fail unless every epoch delivered the same elements as expected (as a multiset).

    ``got`` and ``expected`` are per-epoch ``(keys sorted, features in key order, batch sizes
    sorted)``, as :func:`tfperf.experiments.tf_data.train_epochs` returns them.
    """
    if not isinstance(got, (list, tuple)) or len(got) != len(expected):
        raise GradingFailure(
            f"{what}: expected {len(expected)} epochs of results; got "
            f"{len(got) if isinstance(got, (list, tuple)) else type(got).__name__}.{reread(section)}"
        )
    repeats_first = False
    for epoch, (g, e) in enumerate(zip(got, expected)):
        (g_keys, g_rows, g_sizes), (e_keys, e_rows, e_sizes) = _epoch_arrays(g), _epoch_arrays(e)
        if g_keys.shape != e_keys.shape or not np.array_equal(g_keys, e_keys):
            missing = np.setdiff1d(e_keys, g_keys).size
            raise GradingFailure(
                f"{what}: epoch {epoch + 1} delivered {g_keys.size} elements; expected {e_keys.size}, each record "
                f"once ({missing} records missing, {g_keys.size - np.unique(g_keys).size} delivered twice). "
                f"Every epoch must deliver every record exactly once (no take, skip, repeat or filter)."
                f"{reread(section)}"
            )
        if not np.array_equal(g_sizes, e_sizes):
            raise GradingFailure(
                f"{what}: epoch {epoch + 1} delivered batches of sizes {g_sizes.tolist()}; expected "
                f"{e_sizes.tolist()} (same batch size, the last batch kept).{reread(section)}"
            )
        if g_rows.shape != e_rows.shape or not np.allclose(g_rows, e_rows, rtol=rtol, atol=atol):
            first = _epoch_arrays(got[0])[1]
            repeats_first = (
                epoch > 0 and first.shape == g_rows.shape and np.allclose(g_rows, first, rtol=rtol, atol=atol)
            )
            hint = (
                " It repeats the first epoch's values: the random augmentation ran once and was then reused. "
                "Anything placed after the augmentation that remembers elements (cache) freezes it."
                if repeats_first
                else ""
            )
            raise GradingFailure(
                f"{what}: in epoch {epoch + 1} the features differ from what the naive pipeline "
                f"delivers.{hint}{reread(section)}"
            )


def _stages_shown(dataset: Any, what: str, section: str | None, title: str) -> tuple[list, str]:
    """The stages of ``dataset`` and their listing for a failure's message (a failure if they cannot be read)."""
    try:
        chain = dataset_graph.stages(dataset)
    except TypeError as err:
        raise GradingFailure(f"{what} should return a tf.data.Dataset: {err}{reread(section)}") from err
    except dataset_graph.UnreadablePipeline as err:
        raise GradingFailure(f"{what}: {err}.{reread(section)}") from err
    shown = "\n".join(f"  {i}. {s.describe()}" for i, s in enumerate(chain, 1))
    return chain, f"\n{title}:\n{shown}\n"


@guard.checked
def check_pipeline_stages(
    dataset: Any,
    *,
    reader: Callable,
    expensive: Callable,
    random: Callable,
    what: str,
    section: str | None = None,
    expensive_output_fits_in_memory: bool = True,
) -> list:
    """Fail unless ``dataset`` is built for speed, read from its own graph:

    no Python generator; the stage running ``reader`` (a ``tf.py_function``'s Python
    function) runs in parallel; a cache before the stage running ``random``; a ``prefetch``
    at the end. Where the cache goes depends on ``expensive_output_fits_in_memory``:

    - True: a cache after the stage running ``expensive`` (its work is done once);
    - False (what ``expensive`` returns is too large for memory, as when decoding compressed
      images): no in-memory cache (``cache()`` without a file name) after that stage; a
      cache after the reads, either in memory before ``expensive`` or in a file after it
      (the data performance guide's two answers).

    Returns the stages.
    """
    chain, where = _stages_shown(dataset, what, section, "Its stages, read from its graph")

    def fail(message: str) -> None:
        raise GradingFailure(f"{what}: {message}{where}{reread(section).strip()}")

    if any(s.python_generator for s in chain):
        fail(
            "it still reads through Dataset.from_generator: a Python generator produces one element at a time, "
            "holding Python's GIL, and tf.data cannot run it in parallel."
        )
    reads = dataset_graph.stages_calling(chain, reader)
    if not reads:
        fail("no stage reads the records through the store's read function.")
    if not all(dataset_graph.runs_in_parallel(chain[i], dataset.options()) for i in reads):
        fail(
            "the records are read one at a time: the map that reads them is sequential "
            "(num_parallel_calls not set), so every read waits for the one before."
        )
    decodes, augments = dataset_graph.stages_calling(chain, expensive), dataset_graph.stages_calling(chain, random)
    if not decodes or not augments:
        fail("the pipeline must still decode and augment the records.")
    caches = [i for i, s in enumerate(chain) if s.kind == "cache"]
    if not caches:
        fail("nothing is cached: every epoch reads and decodes every record again.")
    if any(i > min(augments) for i in caches):
        fail("a cache comes after the random augmentation: every epoch would replay the first epoch's augmentation.")
    if expensive_output_fits_in_memory:
        if not any(i > max(decodes) for i in caches):
            fail("the cache comes before the decoding: every epoch decodes every record again.")
    else:
        in_memory = [i for i in caches if i > min(decodes) and not chain[i].args.get("filename")]
        if in_memory:
            fail(
                "it caches the decoded records in memory (cache() without a file name, after the decoding), "
                "and the decoded data set does not fit in memory. Cache the raw records in memory before "
                "decoding them, or the decoded records in a file (cache(filename))."
            )
        if not any(i > max(reads) for i in caches):
            fail("the cache comes before the reads: every epoch reads every record again.")
    last = [s for s in chain if s.kind != "options"][-1]
    if last.kind != "prefetch":
        fail(
            "it does not end with prefetch: the training step and the pipeline then take turns instead of overlapping."
        )
    return chain


def _rows(dataset: Any, limit: int) -> np.ndarray:
    """Every value ``dataset`` yields, each component of its elements flattened (as float64), and sorted (at most
    ``limit`` elements read)."""
    import tensorflow as tf

    values = []
    with tf.device("/cpu:0"):  # on a GPU machine, a service's elements cannot be iterated on the GPU (an H100)
        for i, element in enumerate(dataset):
            if i == limit:
                break
            values += [np.ravel(np.asarray(part, dtype=np.float64)) for part in tf.nest.flatten(element)]
    return np.sort(np.concatenate(values)) if values else np.zeros(0)


@guard.checked
def assert_served(dataset: Any, *, preprocess: Callable, what: str, section: str | None = None) -> list:
    """Fail unless ``dataset`` reads from a ``tf.data`` service, with the ``tf.function`` ``preprocess`` run behind
    the service: no stage of this process's graph calls it, and no stage after the service runs a function at all (a
    ``tf.py_function`` that called it would not show as a call). Read from the dataset's graph only, nothing read
    from it: cheap enough for every timed call of a speed check. Returns the stages."""
    chain, where = _stages_shown(dataset, what, section, "Its stages in this process, read from its graph")
    if not any(s.kind == "service" for s in chain):
        raise GradingFailure(
            f"{what}: no stage reads from the tf.data service: every element is made in this process. Hand the "
            f"pipeline to the service with tf.data.experimental.service.distribute(...).{where}{reread(section).strip()}"
        )
    if dataset_graph.stages_calling(chain, preprocess):
        raise GradingFailure(
            f"{what}: the preprocessing runs in this process, after the service: the service's workers only pass "
            f"elements through. Apply distribute after the map that preprocesses.{where}{reread(section).strip()}"
        )
    after = chain[max(i for i, s in enumerate(chain) if s.kind == "service") + 1 :]
    # the service's own stage after it: a map that uncompresses what the workers sent (DataServiceDataset_uncompress)
    working = [s for s in after if s.python or any("DataServiceDataset_uncompress" not in f for f in s.functions)]
    if working:
        raise GradingFailure(
            f"{what}: after the service, this process still runs code on every element ({working[0].describe()}): "
            f"the work belongs before distribute, in the service's workers; after it, only batching and prefetching."
            f"{where}{reread(section).strip()}"
        )
    return chain


@guard.checked
def check_served_pipeline(
    dataset: Any, local: Any, *, preprocess: Callable, what: str, section: str | None = None, limit: int = 100_000
) -> list:
    """Fail unless ``dataset`` is served (:func:`assert_served`) and yields the values of ``local``, as a multiset
    (batched or not, in any order: no element lost, none twice). Returns the stages."""
    chain = assert_served(dataset, preprocess=preprocess, what=what, section=section)
    got, expected = _rows(dataset, limit), _rows(local, limit)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-6, atol=0):
        raise GradingFailure(
            f"{what} yields {got.size} values, the local pipeline {expected.size}"
            f"{'' if got.size != expected.size else ', but not the same ones'}: every element once, none twice "
            f"(processing_mode='distributed_epoch' splits one epoch between the workers; 'parallel_epochs' gives "
            f"each worker a whole epoch).{reread(section)}"
        )
    return chain


@guard.checked
def dataset_from(fn: Callable, args: Sequence[Any], *, what: str, section: str | None = None):
    """Call learner code that returns a dataset, quietly."""
    return call(fn, tuple(args), who=what, section=section)
