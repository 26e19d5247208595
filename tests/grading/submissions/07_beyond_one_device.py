"""Round-trip cases of chapter 7 (07_beyond_one_device). Exercise 1: replicated_tests (3: mirrored variables, every
replica on the per-replica batch, the weights of one device on the global batch): the one-device training called
inside, each replica's loss averaged over its own batch, the dataset batched by the per-replica size, the global
batch not split, training in the scope's cross-replica context; honest alternatives: Keras fit in the scope, a Keras
loss with its default reduction. Exercise 2: served_tests (2: a service stage, the preprocessing behind it, every
element once), served_speed_tests (2: the structure again; its speed only where the process has 3 cores, never in a
grading lane of one): the local pipeline, the map after the service, parallel_epochs, the preprocessing hidden in a
py_function after the service; an honest alternative that batches after the service (slower where timed)."""

from tests.grading.submission import Submission

_HEAD = """def train_replicated(strategy, x, y, *, seed, steps, per_replica):
    global_batch = per_replica * strategy.num_replicas_in_sync
"""
_LOOP = """    with strategy.scope():
        model, optimizer = make_classifier(seed), keras.optimizers.SGD(RATE)
    loss_of = per_example_loss()
    batches = tf.data.Dataset.from_tensor_slices((x, y)).batch({batch}, drop_remainder=True)
    batches = {split}

    def step(features, labels):
        with tf.GradientTape() as tape:
            losses = loss_of(labels, model(features, training=True))
            loss = {loss}
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    @tf.function
    def distributed_step(features, labels):
        strategy.run(step, args=(features, labels))

    for _, (features, labels) in zip(range(steps), batches):
        distributed_step(features, labels)
    return model
"""
_SPLIT = "strategy.experimental_distribute_dataset(batches)"
_GLOBAL_LOSS = "tf.nn.compute_average_loss(losses, global_batch_size=global_batch)"


def _loop(batch="global_batch", split=_SPLIT, loss=_GLOBAL_LOSS):
    return _HEAD + _LOOP.format(batch=batch, split=split, loss=loss)


_FAILS_1 = {"replicated_tests": 0}
_FAILS_2 = {"served_tests": 0, "served_speed_tests": 0}
_DISTRIBUTE = 'tf.data.experimental.service.distribute(processing_mode="{mode}", service=service)'

SUBMISSIONS = [
    Submission(
        "concepts_one_wrong",
        {
            "concepts": 'global_batch_to_give = "a"\nloss_divided_by = "c"\n'
            'logical_devices_show = "b"\nparallel_epochs_count = "c"'
        },
        {"concepts_global_batch_to_give": 0},
    ),
    # Exercise 1 unfixed: the one-device training under the new name (its weights match; no replica ran it).
    Submission(
        "replicated: the one-device training inside",
        {"replicated": _HEAD + "    return train_one_device(x, y, seed=seed, steps=steps, batch=global_batch)\n"},
        _FAILS_1,
    ),
    # Each replica's loss averaged over its own batch: every gradient twice too large with 2 replicas.
    Submission("replicated: mean per replica", {"replicated": _loop(loss="tf.reduce_mean(losses)")}, _FAILS_1),
    # The dataset batched by the per-replica size: each replica sees half of it.
    Submission(
        "replicated: per-replica batch",
        {
            "replicated": _loop(
                batch="per_replica", loss="tf.nn.compute_average_loss(losses, global_batch_size=per_replica)"
            )
        },
        _FAILS_1,
    ),
    # Not split: every replica gets the whole global batch.
    Submission("replicated: the global batch on each replica", {"replicated": _loop(split="batches")}, _FAILS_1),
    # Trained in the scope without strategy.run: the cross-replica context, never a replica.
    Submission(
        "replicated: cross-replica context",
        {
            "replicated": _HEAD
            + """    with strategy.scope():
        model, optimizer = make_classifier(seed), keras.optimizers.SGD(RATE)
        loss_of = per_example_loss()
        for features, labels in tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch).take(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(loss_of(labels, model(features, training=True)))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return model
"""
        },
        _FAILS_1,
    ),
    # Honest alternative: Keras fit in the scope, given the global batch (fit splits it; its loss is Keras's mean).
    Submission(
        "replicated: keras fit",
        {
            "replicated": _HEAD
            + """    with strategy.scope():
        model = make_classifier(seed)
        model.compile(keras.optimizers.SGD(RATE), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x[: global_batch * steps], y[: global_batch * steps], batch_size=global_batch, epochs=1,
              shuffle=False, verbose=0)
    return model
"""
        },
        {},
    ),
    # Honest alternative: a Keras loss with its default reduction, which under a strategy divides by the replicas.
    Submission(
        "replicated: keras loss reduced",
        {
            "replicated": _loop(
                loss="keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, "
                "model(features, training=True))"
            )
        },
        {},
    ),
    # Exercise 2 unfixed: the local pipeline under the new name.
    Submission(
        "served: local",
        {"served": "def served_pipeline(first, count, service):\n    return local_pipeline(first, count)\n"},
        _FAILS_2,
    ),
    # The map after the service: the workers only pass record ids through.
    Submission(
        "served: map after the service",
        {
            "served": "def served_pipeline(first, count, service):\n"
            "    ids = tf.data.Dataset.range(first, first + count).apply("
            + _DISTRIBUTE.format(mode="distributed_epoch")
            + ")\n    return ids.map(preprocess).batch(BATCH)\n"
        },
        _FAILS_2,
    ),
    # Every worker makes the whole epoch: each element twice with 2 workers.
    Submission(
        "served: parallel epochs",
        {
            "served": "def served_pipeline(first, count, service):\n    return local_pipeline(first, count).apply("
            + _DISTRIBUTE.format(mode="parallel_epochs")
            + ")\n"
        },
        _FAILS_2,
    ),
    # Honest alternative, slower where timed: one element a request, batched after the service.
    Submission(
        "served: batched after the service",
        {
            "served": "def served_pipeline(first, count, service):\n"
            "    records = tf.data.Dataset.range(first, first + count).map(preprocess)\n"
            "    return records.apply(" + _DISTRIBUTE.format(mode="distributed_epoch") + ").batch(BATCH)\n"
        },
        {},
    ),
]
