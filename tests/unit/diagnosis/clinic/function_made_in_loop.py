"""A tf.function made inside the training loop: a new function, so a new trace, every step.

Reported: Stack Overflow 53137115, "Why does my tensorflow code runs more and more slower as the training goes on?"
(Cao et al. 2022: root cause "Model: confusion with computation model", symptom "Time: increasing time over time").
Expected: retracing
"""

import tensorflow as tf

w = tf.Variable(tf.random.normal([32, 1], seed=1))
x, y = tf.random.normal([256, 32], seed=2), tf.random.normal([256, 1], seed=3)

for _step in range(200):

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((x @ w - y) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss

    train_step()
