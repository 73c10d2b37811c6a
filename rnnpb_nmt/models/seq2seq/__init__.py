"""The sequence-to-sequence baseline (Sutskever et al. 2014): ``--model=encdec``."""
