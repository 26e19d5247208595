"""A learning rate that decays in Python and is passed to the tf.function as a float: a new trace for every value.

Reported: Stack Overflow 55711115, "Tensorflow 2.0 model using tf.function very slow and is recompiling every time
the train count changes" (Cao et al. 2022: root cause "Model: confusion with computation model", symptom
"Time: slow execution time").
Expected: retracing
"""

import tensorflow as tf

w = tf.Variable(tf.random.normal([64, 1], seed=1))
x, y = tf.random.normal([512, 64], seed=2), tf.random.normal([512, 1], seed=3)


@tf.function
def train_step(learning_rate):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((x @ w - y) ** 2)
    w.assign_sub(learning_rate * tape.gradient(loss, w))
    return loss


learning_rate = 0.05
for _step in range(300):
    train_step(learning_rate)
    learning_rate *= 0.995
