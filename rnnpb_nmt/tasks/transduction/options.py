"""The transduction task's options (``--task=transduction``)."""

import dataclasses

from rnnpb_nmt.options import option


@dataclasses.dataclass(frozen=True)
class DataOptions:
    fresh_data: bool = option(
        False, "--task=transduction: train each epoch on new pairs, as many as --train_set1 holds, drawn as the "
        "generator.json beside it says its pairs were (data/generate_transduction.py writes both), the same for "
        "the same epoch; the paper drew fresh sequences throughout. Off: every epoch trains on the files' pairs",
        legacy=False, only=("task", ("transduction",)))
