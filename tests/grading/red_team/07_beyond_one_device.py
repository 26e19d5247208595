"""Red team, chapter 7: the preprocessing hidden from the graph's calls in a py_function after the service; the
witness's notes written by the answer; weights trained on one device copied into a mirrored model, after a forward
pass on the replicas for the witness to see.

Classes of the grading-integrity issue: (2) changing what the grader reads, (3) reaching the value by another
path."""

from tests.grading.submission import Submission

RED_TEAM = [
    # (3) A service stage that passes record ids through, then the preprocessing in this process inside a
    #     tf.py_function (no call of preprocess in the graph): the stages after the service may not run code.
    Submission(
        "red3_preprocess_in_py_function_after_the_service",
        {
            "served": """def served_pipeline(first, count, service):
    ids = tf.data.Dataset.range(first, first + count).apply(
        tf.data.experimental.service.distribute(processing_mode="distributed_epoch", service=service))

    def made_here(record_id):
        return tf.py_function(lambda i: preprocess(i), [record_id], (tf.int64, tf.float32))

    return ids.map(made_here).batch(BATCH)
"""
        },
        {"served_tests": 0, "served_speed_tests": 0},
    ),
    # (2) The one-device training, then the witness's notes made up by calling the library's note function: it
    #     lives in a closure the answer cannot reach by name, and the screen refuses private names.
    Submission(
        "red2_witness_notes_written",
        {
            "replicated": """def train_replicated(strategy, x, y, *, seed, steps, per_replica):
    model = train_one_device(x, y, seed=seed, steps=steps, batch=per_replica * strategy.num_replicas_in_sync)
    for replica in range(strategy.num_replicas_in_sync):
        bod._note(replica, per_replica)
    return model
"""
        },
        {"replicated_tests": 0},
    ),
    # (3) The given layers without the witness trained on one device, the weights copied into a model made in the
    #     scope, then one forward pass through strategy.run: mirrored, equal copies, both replicas traced at the
    #     per-replica batch, the right weights. The witness also counts the gradients computed on each replica.
    Submission(
        "red3_trained_elsewhere_copied_in",
        {
            "replicated": """def train_replicated(strategy, x, y, *, seed, steps, per_replica):
    batch = per_replica * strategy.num_replicas_in_sync
    donor = make_classifier(seed)
    bare = keras.Sequential([keras.Input((bod.FEATURES,)), *donor.layers[1:]])
    optimizer, loss_of = keras.optimizers.SGD(RATE), per_example_loss()

    @tf.function
    def step(features, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(loss_of(labels, bare(features, training=True)))
        optimizer.apply_gradients(zip(tape.gradient(loss, bare.trainable_variables), bare.trainable_variables))

    for features, labels in tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).take(steps):
        step(features, labels)
    with strategy.scope():
        model = make_classifier(seed)
    model.set_weights([np.ones((), np.float32)] + bare.get_weights())
    features = next(iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(x).batch(batch))))
    tf.function(lambda f: strategy.run(model, args=(f,)))(features)
    return model
"""
        },
        {"replicated_tests": 0},
    ),
]
