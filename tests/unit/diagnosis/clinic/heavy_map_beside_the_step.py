"""A costly per-image map on one thread that keeps up with the step, but takes one of the CPU's cores from it.

tf.data runs the map (fused with its batch) ahead of the step on threads of its own, so the step hardly waits for a
batch: the Profiler's input wait is small. On a CPU those threads compete with the step's own work for the cores.
Reported: the course's chapter 4, section 3 (Parallel map and three kinds of work); Cao et al. 2022 label
preprocessing done again for every record under "Data: inefficient data preprocessing".
Expected: input-bound
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(14)
pictures = rng.integers(0, 256, size=(1024, 48, 48, 3), dtype=np.uint8)
classes = rng.integers(0, 5, size=1024).astype(np.int32)


def prepare(picture, label):
    picture = tf.image.convert_image_dtype(picture, tf.float32)
    picture = tf.image.resize(picture, (72, 72), method="bicubic")
    picture = tf.image.random_crop(picture, (64, 64, 3))
    picture = tf.image.random_flip_left_right(picture)
    picture = tf.image.random_contrast(picture, 0.8, 1.2)
    picture = tf.image.resize(picture, (24, 24), method="area")
    return tf.image.per_image_standardization(picture), label


batches = tf.data.Dataset.from_tensor_slices((pictures, classes)).map(prepare).batch(32).repeat()

model = tf.keras.Sequential(
    [
        tf.keras.Input((24, 24, 3)),
        tf.keras.layers.Conv2D(16, 3, activation="relu"),
        tf.keras.layers.MaxPool2D(),
        tf.keras.layers.Conv2D(32, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(5),
    ]
)
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for step, (x, y) in enumerate(batches.take(400)):
    loss = train_step(x, y)
    if step % 100 == 0:
        print("step", step, float(loss))
