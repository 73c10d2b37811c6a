"""The Transformer's options (``--model=transformer``): attention heads and feed-forward width,
which the bound model's Transformer language models (``--model=rnnpbnmt --language_model=transformer``)
read too. Its model width is --units, its layers --num_layers, its dropout --dropout, as for the
recurrent models. What an options module holds: ``rnnpb_nmt.options``."""

import dataclasses

from rnnpb_nmt.options import option

ORDER = 5
# Its layers are Keras layers that compute in the policy of --mixed_precision (tests/test_gpu_options.py).
READS = {"transformer": ("num_layers", "dropout", "mixed_precision", "jit_compile")}
TRANSFORMER = ("model", ("transformer",))
# The bound model refuses them with LSTM language models (rnnpb_nmt/models/rnnpb/model.py).
TRANSFORMER_LAYERS = ("model", ("transformer", "rnnpbnmt"))


@dataclasses.dataclass(frozen=True)
class ModelOptions:
    # Older runs have no Transformer: the legacy values are never read.
    heads: int = option(4, "transformer: attention heads per attention layer (--units must be a multiple)",
                        1, 1e4, legacy=4, only=TRANSFORMER_LAYERS)
    ffn_units: int = option(0, "transformer: width of each layer's feed-forward hidden layer (0: 4 x --units, "
                               "as Vaswani et al.)", 0, 1e6, legacy=0, only=TRANSFORMER_LAYERS)
    # Older runs drew their word embeddings scaled.
    word_init: str = option("scaled", "transformer: the word embeddings' initial values: scaled (N(0, 1 / "
                                      "--embedding_size): times sqrt(--units), of about the positions' size) or "
                                      "glorot (Glorot-uniform, as OpenNMT-tf: about half that for small "
                                      "vocabularies)", choices=("scaled", "glorot"), legacy="scaled", only=TRANSFORMER)
    # Older runs had their own output layer.
    tie_embeddings: bool = option(False, "transformer: the output layer's weights are the target embedding's "
                                         "(Press and Wolf 2017; needs --embedding_size = --units); with "
                                         "--language_model=transformer each language model's are its own word "
                                         "embedding's", legacy=False, only=TRANSFORMER_LAYERS)
