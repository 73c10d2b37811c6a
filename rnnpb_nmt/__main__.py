"""``python -m rnnpb_nmt``: the ``rnnpb-nmt`` command."""

import sys

from rnnpb_nmt.cli import console_main

sys.exit(console_main())
