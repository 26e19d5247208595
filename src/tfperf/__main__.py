import sys

from tfperf.cli import main

sys.exit(main())
