import os
import sys

from tfperf.cli import main

code = main()
if sys.argv[1:2] == ["diagnose"]:
    # The diagnosed script's threads (a tf.data pipeline's) may still run: end here, without the interpreter's
    # shutdown, once what was printed is out (a pipeline's iterator collected at shutdown hung the process once).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
sys.exit(code)
