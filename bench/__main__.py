"""Entry point: ``python -m bench run --lang python --lang java``."""

import sys

from bench.cli import main

sys.exit(main())
