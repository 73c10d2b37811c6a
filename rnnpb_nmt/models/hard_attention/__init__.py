"""Hard monotonic attention (Aharoni & Goldberg 2017) for morphological inflection:
``--model=hard_attention`` with ``--task=inflection``."""
