"""Hard monotonic attention (Aharoni & Goldberg 2017) for morphological inflection:
``--model=hard_attention`` with ``--task=inflection``."""

from hardattention.model import HardAttentionTransducer

__all__ = ["HardAttentionTransducer"]
