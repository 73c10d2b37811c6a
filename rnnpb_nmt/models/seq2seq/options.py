"""The sequence-to-sequence family's options (``--model=encdec``): recurrent unit, attention,
source reversal, teacher forcing.
What an options module holds: ``rnnpb_nmt.options``."""

import dataclasses

from rnnpb_nmt.options import option

ORDER = 2
# Not --mixed_precision: its recurrent layers' states, masks and decoding steps are float32 tensors of their own.
READS = {"encdec": ("num_layers", "dropout", "jit_compile")}
ENCDEC = ("model", ("encdec",))


@dataclasses.dataclass(frozen=True)
class ModelOptions:
    reverse_source: bool = option(False, "reverse encoder input", only=ENCDEC)
    # The seq-to-seq model's (encdec) recurrent unit and attention (McCoy et al. 2018); older runs
    # are LSTMs without attention.
    cell: str = option("lstm", "encdec: recurrent unit of encoder and decoder: lstm, gru, srn (Elman)",
                       choices=("lstm", "gru", "srn"), legacy="lstm", only=ENCDEC)
    attention: str = option("none", "encdec: attention over the encoder outputs: none (the decoder starts from the "
                            "encoder's final states only), location (weights from the decoder state over source "
                            "positions), content (weights from the decoder state and each encoder output)",
                            choices=("none", "location", "content"), legacy="none", only=ENCDEC)
    attention_style: str = option(
        "bahdanau", "encdec with attention: bahdanau (the previous word and decoder state weigh the encoder outputs; "
        "their sum joins the decoder's input: McCoy et al.) or luong (the new top decoder state weighs them; "
        "tanh(W [state; sum]) is the output: Luong et al. 2015's global attention, Aharoni & Goldberg's soft model)",
        choices=("bahdanau", "luong"), legacy="bahdanau", only=("attention", ("location", "content")))
    bidirectional: bool = option(False, "encdec: a bidirectional encoder (forward and backward stacks; the decoder "
                                        "starts from the forward one's final states)", legacy=False, only=ENCDEC)
    attention_positions: int = option(64, "--attention=location: source positions (words + <end>) it can weigh; "
                                      "later positions get no weight", 1, 1e5, legacy=64,
                                      only=("attention", ("location",)))
    attention_padding: str = option(
        "masked", "--attention=location: masked (the weights are a softmax over the sentence's own positions) or "
        "zeros (McCoy et al.'s code: a softmax over all --attention_positions, the positions past the sentence "
        "reading zero encoder outputs, so that the weight they take is lost to the context)",
        choices=("masked", "zeros"), legacy="masked", only=("attention", ("location",)))

    # McCoy et al.'s code differs from ours in the decoder's input layer and the embeddings' scale
    # (notes/question_formation.md, 2026-11-28): both as options, to probe the generalisation gap.
    decoder_input: str = option(
        "concat", "encdec: what the decoder's recurrent unit reads: concat (the previous word's embedding, with "
        "bahdanau attention the context beside it) or combined (McCoy et al.'s code: a linear layer maps them back to "
        "the embedding size, then a ReLU; without that attention, the ReLU of the embedding)",
        choices=("concat", "combined"), legacy="concat", only=ENCDEC)
    embedding_init: str = option(
        "uniform", "encdec: the embeddings' initial values: uniform (Keras's, within ±0.05) or normal (N(0, 1), "
        "PyTorch's, as McCoy et al.'s code)", choices=("uniform", "normal"), legacy="uniform", only=ENCDEC)
    dropout_style: str = option(
        "sequence", "encdec: where --dropout acts: sequence (one mask a sentence on the inputs of every recurrent layer "
        "of the encoder and the decoder) or decoder_words (McCoy et al.'s code: on the decoder's input word embeddings "
        "only, a new mask every step; the encoder has none)", choices=("sequence", "decoder_words"), legacy="sequence",
        only=ENCDEC)
    weight_init: str = option(
        "keras", "encdec: the other weights' initial values: keras (Glorot kernels, orthogonal recurrent kernels, zero "
        "biases but the LSTM's forget gate's 1) or pytorch (PyTorch's defaults, as McCoy et al.'s code: every "
        "recurrent weight and bias uniform within ±1/sqrt(--units) (the LSTM's and SRN's one bias the sum of two such, "
        "as PyTorch's two biases add up), every linear layer's weight and bias within "
        "±1/sqrt(its inputs), content attention's v within ±1)", choices=("keras", "pytorch"), legacy="keras",
        only=ENCDEC)


@dataclasses.dataclass(frozen=True)
class TrainingOptions:
    teacher_forcing: float = option(
        1.0, "--model=encdec: the probability that a training batch's decoder reads the target's previous words; "
        "otherwise it reads its own previous greedy predictions (McCoy et al.'s code: 0.5)", 0, 1, legacy=1.0,
        only=ENCDEC)
    free_running_cut: bool = option(
        False, "--model=encdec with --teacher_forcing below 1: a batch trained on the decoder's own predictions is "
        "scored only up to the step at which the batch's first pair predicts the end of its sentence (<end>, '.' or "
        "'?'), as McCoy et al.'s code ends the whole batch there (under --distribute, each replica's first pair); "
        "without it every target word is scored",
        legacy=False, only=ENCDEC)
