"""The hard-attention transducer's options (``--model=hard_attention``).
What an options module holds: ``rnnpb_nmt.options``."""

import dataclasses

from rnnpb_nmt.options import option

ORDER = 4
# Not --mixed_precision: its recurrent layers' states and masks are float32 tensors of their own. Not
# --jit_compile: XLA compiles its step, but the gradients differ from the plain step's by 2 % (the other
# families': 2e-7), a difference not yet explained (tests/test_gpu_options.py).
READS = {"hard_attention": ("num_layers", "dropout")}


@dataclasses.dataclass(frozen=True)
class ModelOptions:
    # The hard-attention transducer's; older runs have no features.
    feature_size: int = option(100, "hard_attention: size of the features' vector, the sum of one embedding per "
                                    "feature (the paper concatenates 20 per feature)", 1, 1e5, legacy=100,
                                only=("model", ("hard_attention",)))
    tie_feedback: bool = option(False, "hard_attention: the previous action's embedding is, for an action that "
                                       "writes a character of the lemmas' alphabet, that character's encoder "
                                       "embedding (one table, as the authors' code; <step>, <start> and characters "
                                       "found only in forms keep rows of their own)", legacy=False,
                                only=("model", ("hard_attention",)))
