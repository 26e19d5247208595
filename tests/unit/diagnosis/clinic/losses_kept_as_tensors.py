"""Each step's loss kept as a tensor in a Python list, to plot later: memory that grows with every step.

Reported: Stack Overflow 50331201, "Memory Leak Keras TensorFlow1.8.0" (Cao et al. 2022: root cause "API: inefficient
API usage", symptom "Memory: memory leak"); here the leak is the script's own list.
Expected: memory-growth
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


kept = []
for _step in range(300):
    loss = train_step()
    kept.append((loss, tf.identity(w)))  # the loss and a snapshot of the weights, to plot later
