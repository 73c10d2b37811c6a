#!/usr/bin/env python3
"""The demo corpus's generator, kept for the commands recorded with it: the installed package's
``rnnpb_nmt.demo_data`` (``rnnpb-nmt demo-data``, which needs no clone of the repository).

    python3 data/generate_demo.py --out demo/data --train 4000
"""

import sys

from rnnpb_nmt.demo_data import main

if __name__ == "__main__":
    sys.exit(main())
