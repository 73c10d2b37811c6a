"""Shared core of the toolkit: vocabulary, data pipeline, the NMT base class, search and metrics.

Models (``seq2seq``, ``rnnpb``, ``memorylstm``) subclass :class:`nmtcore.model.NMTModel` and implement only what
differs between them; everything else lives here, one concept per module.
"""
