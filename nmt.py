#!/usr/bin/env python3
"""The thesis's command line, ``python3 nmt.py --do_training|--do_testing|--query ... --working_dir=DIR``.

A shim over the package's ``rnnpb-nmt`` command (``rnnpb_nmt.cli``), kept so that the thesis's run
scripts and the recorded commands run unchanged; from the repository's root it needs no install.
"""

import sys

from rnnpb_nmt.cli import console_main

if __name__ == "__main__":
    sys.exit(console_main())
