"""A training run made correct under ``tf.distribute.MirroredStrategy`` (chapter 7).

:func:`check_replicated_training` runs the learner's replicated training and the given one-device training on the
same records and initial weights, and fails unless, for the right reason, they end with the same weights:

- the model's variables are mirrored: one copy on each of the strategy's devices (made in its scope), and the
  copies equal (the gradients were all-reduced);
- its step ran on every replica, each on the per-replica batch (the model's :class:`ReplicaWitness` notes who ran
  it, and on how many examples), never in the strategy's cross-replica context;
- it trained there: every replica computed the gradients of every step (the witness counts, on each replica, the
  gradients computed through it), so that weights trained elsewhere and copied in, after a step run for show, fail;
- its weights are the one-device run's with the global batch (per-replica batch x replicas), within a stated
  tolerance: the all-reduce sums the replicas' gradients, so each replica's loss must be averaged over the
  global batch, not its own.

Both runs train in full float32 (:func:`tfperf.runtime.device.full_float32`): with TensorFloat-32 two correct
runs drift apart on a GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread


def _mirrored_copies(variable: Any) -> list[Any] | None:
    """The per-device copies of a (Keras) variable, or None where it is not a distributed variable."""
    import tensorflow as tf

    inner = getattr(variable, "value", variable)
    if isinstance(inner, tf.distribute.DistributedValues):
        return list(inner.values)
    return None


def _check_mirrored(model: Any, strategy: Any, who: str, section: str | None) -> None:
    devices = sorted(strategy.extended.worker_devices)
    for variable in model.variables:
        copies = _mirrored_copies(variable)
        if copies is None:
            raise GradingFailure(
                f"{who}: the model's variable {variable.path!r} has one copy, not one per replica: build the model "
                f"(and the optimizer) inside `with strategy.scope():`.{reread(section)}"
            )
        if sorted(c.device for c in copies) != devices:
            raise GradingFailure(
                f"{who}: the model's variable {variable.path!r} lives on {sorted(c.device for c in copies)}, not on "
                f"the strategy's devices {devices}.{reread(section)}"
            )
        first = copies[0].numpy()
        if any(not np.array_equal(first, c.numpy()) for c in copies[1:]):
            raise GradingFailure(
                f"{who}: the copies of {variable.path!r} differ between replicas: each replica applied its own "
                f"gradients. Apply them with an optimizer made in the strategy's scope, inside strategy.run, so that "
                f"they are all-reduced first.{reread(section)}"
            )


def _check_ran_per_replica(
    seen: Sequence[tuple[int | None, int | None]], replicas: int, per_replica: int, who: str, section: str | None
) -> None:
    outside = [batch for replica, batch in seen if replica is None]
    if outside or not seen:
        where = "in the strategy's cross-replica context" if outside else "nowhere"
        raise GradingFailure(
            f"{who}: the model ran {where}, not on the replicas: run each step with strategy.run(step, args=...) on "
            f"a distributed dataset.{reread(section)}"
        )
    ran_on = sorted({replica for replica, _ in seen})
    if ran_on != list(range(replicas)):
        raise GradingFailure(
            f"{who}: the model ran on replica(s) {ran_on} of {replicas}: every replica runs every step "
            f"(strategy.run).{reread(section)}"
        )
    batches = sorted({batch for _, batch in seen if batch is not None})
    if batches and batches != [per_replica]:
        raise GradingFailure(
            f"{who}: each replica saw batches of {batches} examples, not {per_replica}: batch the dataset with the "
            f"global batch (per_replica x strategy.num_replicas_in_sync) and let the strategy split it "
            f"(strategy.experimental_distribute_dataset).{reread(section)}"
        )


def _check_trained_on_replicas(
    passes: Sequence[Sequence[int]], replicas: int, steps: int, who: str, section: str | None
) -> None:
    if not passes:
        raise GradingFailure(
            f"{who}: the model it returned has no ReplicaWitness layer: build it with the given function.{reread(section)}"
        )
    counted = list(passes[0])
    if counted != [steps] * replicas:
        raise GradingFailure(
            f"{who}: the replicas computed the model's gradients {counted} times (one count per replica), not {steps} "
            f"times each: every step's gradients are computed on every replica (strategy.run of a step that trains), "
            f"not elsewhere and copied in.{reread(section)}"
        )


@guard.checked
def check_replicated_training(
    train_replicated: Callable[..., Any],
    train_one_device: Callable[..., Any],
    *,
    strategy: Any,
    per_replica: int,
    steps: int,
    seeds: Sequence[int],
    rtol: float = 1e-4,
    atol: float = 1e-5,
    section: str | None = None,
) -> None:
    """Fail unless ``train_replicated(strategy, x, y, seed=, steps=, per_replica=)`` returns its trained model,
    mirrored on the strategy's devices and run on every replica, with the weights of
    ``train_one_device(x, y, seed=, steps=, batch=per_replica * replicas)`` (see the module), for each seed."""
    from tfperf.experiments import beyond_one_device as bod
    from tfperf.runtime import device

    replicas = strategy.num_replicas_in_sync
    if replicas < 2:
        raise ValueError(f"The check needs a strategy with 2 replicas or more, not {replicas}.")
    batch = per_replica * replicas
    for seed in seeds:
        x, y = bod.make_data(batch * steps, seed=1000 + seed)
        who = f"train_replicated(strategy, x, y, seed={seed}, steps={steps}, per_replica={per_replica})"
        bod.forget_witnessed()
        with device.full_float32():
            model = call(
                lambda: train_replicated(strategy, x, y, seed=seed, steps=steps, per_replica=per_replica),
                (),
                who=who,
                section=section,
            )
        seen = bod.witnessed()
        if not hasattr(model, "variables") or not hasattr(model, "get_weights"):
            raise GradingFailure(
                f"{who} returned {type(model).__name__}, not the trained Keras model.{reread(section)}"
            )
        _check_mirrored(model, strategy, who, section)
        _check_ran_per_replica(seen, replicas, per_replica, who, section)
        _check_trained_on_replicas(bod.replica_backward_passes(model), replicas, steps, who, section)
        with device.full_float32():
            expected = train_one_device(x, y, seed=seed, steps=steps, batch=batch).get_weights()
        got = model.get_weights()
        if len(got) != len(expected) or any(g.shape != e.shape for g, e in zip(got, expected)):
            raise GradingFailure(
                f"{who}: the model's weights have shapes {[g.shape for g in got]}, not the given model's "
                f"{[e.shape for e in expected]}: build it with make_model(seed).{reread(section)}"
            )
        worst = max(float(np.max(np.abs(g - e) - rtol * np.abs(e))) for g, e in zip(got, expected))
        if worst > atol:
            scale = np.median([np.median(np.abs(g - e) / np.maximum(np.abs(e), 1e-12)) for g, e in zip(got, expected)])
            raise GradingFailure(
                f"{who}: after {steps} steps its weights are not the one-device run's on the global batch of {batch} "
                f"(largest difference beyond the tolerance: {worst:.3g}; allowed: rtol={rtol:g}, atol={atol:g}; "
                f"median relative difference {scale:.2g}). The replicas' gradients are summed: average each "
                f"replica's per-example loss over the global batch (tf.nn.compute_average_loss), and feed each "
                f"step one global batch, split by the strategy.{reread(section)}"
            )
