"""``python -m skdp.cli``."""

import sys

from skdp.cli import main

sys.exit(main())
