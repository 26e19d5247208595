"""Chapter 7 (beyond one device): its data, and the layer that shows where a model ran.

:class:`ReplicaWitness` passes its input through unchanged; each time it runs or is traced, it notes which
replica ran it (``tf.distribute.get_replica_context().replica_id_in_sync_group``; ``None`` in the cross-replica
context of a strategy's scope) and the batch size it saw; not while Keras infers shapes to build the model.
``MirroredStrategy.run`` traces the step once per replica, so after a replicated step the notes hold one line per
replica, each with its per-replica batch. The notes are kept where only :func:`witnessed` and
:func:`forget_witnessed` reach them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfperf.runtime import logs

tf = logs.tensorflow()
import keras  # noqa: E402  (after TensorFlow, quietly)
from keras.src.backend.common.symbolic_scope import in_symbolic_scope  # noqa: E402

FEATURES, CLASSES = 32, 4


def _notes():
    seen: list[tuple[int | None, int | None]] = []

    def note(replica: int | None, batch: int | None) -> None:
        seen.append((replica, batch))

    def read() -> list[tuple[int | None, int | None]]:
        return list(seen)

    def clear() -> None:
        seen.clear()

    return note, read, clear


_note, witnessed, forget_witnessed = _notes()


def make_data(records: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``records`` examples of a 4-class problem: float32 features (records, 32) and int32 labels, from ``seed``."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((records, FEATURES)).astype(np.float32)
    teacher = np.random.default_rng(7).standard_normal((FEATURES, CLASSES)).astype(np.float32)
    return x, np.argmax(x @ teacher, axis=1).astype(np.int32)


class ReplicaWitness(keras.layers.Layer):
    """Passes its input through; notes the replica that traced it and the batch it saw (see the module)."""

    def call(self, inputs: Any) -> Any:
        if in_symbolic_scope():  # Keras inferring shapes while it builds the model: no step runs
            return inputs
        context = tf.distribute.get_replica_context()
        # a constant tensor inside a traced step (MirroredStrategy): its value is known while tracing
        replica = None if context is None else tf.get_static_value(context.replica_id_in_sync_group)
        _note(None if replica is None else int(replica), inputs.shape[0])
        return inputs
