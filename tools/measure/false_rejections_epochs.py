"""False-rejection rate of assert_steady_epochs on chapter 5's reference answer.

python tools/measure/false_rejections_epochs.py N    (2 N checks)
"""

import sys
import time

from tfperf import grading
from tfperf.experiments import gpu_sync
from tfperf.runtime import logs

tf = logs.tensorflow()


def train_epochs(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    total, count, running = tf.constant(0.0), 0, []
    for epoch in range(epochs):
        for i in range(xs.shape[0]):
            total += gpu_sync.train_step(w, xs[i], ys[i])
            count += 1
            running_mean = total / count
        running.append(running_mean)
        on_epoch_end(epoch)
    return w.read_value(), tf.stack(running)


n = int(sys.argv[1])
fails = []
t0 = time.time()
for k in range(n):
    for steps, epochs in ((5, 6), (4, 9)):
        w0, xs, ys = gpu_sync.make_problem(steps, seed=k)
        try:
            grading.assert_steady_epochs(train_epochs, (w0, xs, ys, epochs), what="ref")
        except grading.GradingFailure as e:
            fails.append(str(e)[:200])
print(f"{2 * n} checks, {len(fails)} rejections, {time.time() - t0:.0f} s")
for failure in fails[:5]:
    print(failure)
