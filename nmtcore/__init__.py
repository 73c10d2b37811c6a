"""Shared core of the toolkit: vocabulary, data pipeline, the NMT base class, search and metrics.

Models (``seq2seq``, ``rnnpb``, ``memorylstm``) subclass :class:`nmtcore.model.NMTModel` and implement only what
differs between them; everything else lives here, one concept per module.
"""

# First, before any module uses TensorFlow: the stack's Keras, and a quiet TensorFlow import.
from nmtcore import addons  # noqa: F401
