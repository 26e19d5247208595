"""Each step's loss appended to a history tensor with tf.concat: a new, longer tensor every step, so the step
copies everything logged so far and grows slower as it goes.

Reported: Stack Overflow 62538267, "Is adding values with tf.concat slow in for-loops?" (Cao et al. 2022: root cause
"API: inefficient API usage").
Expected: (outside the catalogue)
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


history = tf.zeros([0])
for _step in range(300):
    history = tf.concat([history, [train_step()]], axis=0)
