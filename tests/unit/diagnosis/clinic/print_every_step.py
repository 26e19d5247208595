"""A line printed in every step, with the loss in it.

Reported: the course's chapter 5 incident (print(loss.numpy()) in every step); Cao et al. 2022 label print-heavy
logging under "API: inefficient API usage".
Expected: host-read-every-step print-in-step
"""

import tensorflow as tf

w = tf.Variable(tf.random.normal([1024, 8], seed=1))
x, y = tf.random.normal([4096, 1024], seed=2), tf.random.normal([4096, 8], seed=3)


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((x @ w - y) ** 2)
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


for step in range(300):
    loss = train_step()
    print(f"step {step}: loss {loss.numpy():.4f}")
