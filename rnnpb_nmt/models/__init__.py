"""The model families, one folder each: its ``model`` module registers the ``--model`` names
(``rnnpb_nmt.registry.register_model``), its ``options`` module declares the flags only it reads.
Every model subclasses ``rnnpb_nmt.models.base.NMTModel``."""
