"""``python -m tfperf.authoring normalize | release | check | lint | launch`` (tfperf.authoring.notebooks)."""

import sys

from tfperf.authoring.notebooks import main

sys.exit(main())
