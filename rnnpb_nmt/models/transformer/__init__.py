"""A small Transformer baseline (Vaswani et al. 2017, pre-layer-norm): ``--model=transformer``."""
