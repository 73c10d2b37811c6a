"""Scores shared below the layers: the log-probability that stands for "impossible".

Hard attention forbids a step with it, search marks a hypothesis that cannot be (or a beam slot
never filled) with it, and the bound model's joint reranking recognises such slots by it; each of
those layers imports it from here, below all of them (docs/extending.md, "Layers").
"""

NEG = -1e9  # "impossible" score; finite so that sums never produce NaN
