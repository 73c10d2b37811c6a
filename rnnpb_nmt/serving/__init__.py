"""Serving a trained run: ``rnnpb-nmt export`` writes it as a TensorFlow SavedModel that translates raw
strings (``export``), ``ExportedModel`` loads such an export with ``rnnpb_nmt.load``'s contract
(``exported``), and ``rnnpb-nmt serve`` answers translation requests over HTTP (``server``)."""
