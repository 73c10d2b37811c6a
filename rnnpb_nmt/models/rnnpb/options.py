"""The bound RNNPB family's options (``--model=rnnpbnmt``): PB tables, binding, recognition,
semi-amortised refinement.
What an options module holds: ``rnnpb_nmt.options``."""

import dataclasses
import typing

from rnnpb_nmt.options import option

ORDER = 1
DEFAULT_MODEL = "rnnpbnmt"  # the thesis's model is the toolkit's default (SPEC section 7)
# Not --mixed_precision: its PB tables and recurrent layers compute in float32 tensors of their own.
READS = {"rnnpbnmt": ("num_layers", "dropout", "jit_compile")}
AMORTIZED = ("amortize", ("encoder", "learned"))
RNNPB = ("model", ("rnnpbnmt",))  # the thesis's options: read by no other family
# The PB tables' and their Adam recognition's options: --amortize has neither (its PBs are proposed and refined).
TABLES = ("amortize", ("none",))


@dataclasses.dataclass(frozen=True)
class ModelOptions:
    num_PB: int = option(128, "PB vector size", 1, 1e5, only=RNNPB)
    binding_strength: float = option(1.0, "soft binding strength alpha", 0, 1e9, only=TABLES)
    bind_hard: bool = option(False, "share one PB table", only=TABLES)
    sigma: float = option(0.0, "PB noise std", 0, 1e3, only=RNNPB)
    no_pb_dropout: bool = option(
        False, "rnnpbnmt: --dropout drops word inputs and hidden units but never PB components (the thesis's "
        "Keras input dropout, and ours by default, drops PB components at layer 1's input too)", legacy=False,
        only=RNNPB)
    pb_input: str = option(
        "gates", "rnnpbnmt: how a language model reads its PB: gates (the thesis: an input of layer 1 at every step) "
        "or state (the PB is its LSTMs' initial state, every layer's (h, c), read by no step; --num_PB must be "
        "2 x --num_layers x --units)", choices=("gates", "state"), legacy="gates", only=RNNPB)
    amortize: str = option(
        "none", "where a sentence's PB comes from: none (the thesis: a trained PB per training sentence, Adam "
        "recognition at test time); encoder (an LSTM encoder per language proposes it and --refine_steps "
        "differentiable steps refine it, in training as at test time); learned (one learned PB, refined so)",
        choices=("none", "encoder", "learned"), legacy="none", only=RNNPB)
    proposal_layers: int = option(1, "--amortize=encoder: LSTM layers of the encoder that proposes a sentence's PB "
                                     "(as many as --num_layers makes it as deep as the language model whose "
                                     "refinement steps it replaces)", 1, 100, legacy=1, only=("amortize", ("encoder",)))
    proposal_output: str = option(
        "dense", "--amortize=encoder: the proposed PB is a learned linear map of the encoder's top output (dense), "
        "or the encoder's final state itself, every layer's (h, c) (state: --num_PB must be 2 x --proposal_layers x "
        "--units)", choices=("dense", "state"), legacy="dense", only=("amortize", ("encoder",)))
    proposal_dropout: float = option(
        0.0, "--amortize=encoder: dropout in training in the encoder that proposes the PB (on its LSTM layers' inputs; "
        "on a Transformer encoder's embeddings, attention and feed-forward outputs), as --dropout is the language "
        "models'", 0, 1, high_open=True, legacy=0.0, only=("amortize", ("encoder",)))
    proposal_reverse: bool = option(
        False, "--amortize=encoder: the encoder reads each sentence backwards (its <end> still last), as a "
        "seq-to-seq's --reverse_source: the PB then holds the sentence's start most clearly, which generation "
        "needs first", legacy=False, only=("amortize", ("encoder",)))
    language_model: str = option(
        "lstm", "--amortize=encoder: each language's model and encoder: lstm (the thesis's RNNPB and an LSTM encoder) "
        "or transformer (a Transformer decoder reading the PB as --pb_slots vectors (--pb_read), and a "
        "Transformer encoder of --proposal_layers layers pooled to the PB (--pb_pool), with --heads and --ffn_units as "
        "--model=transformer's: SONAR's design, rnnpb_nmt/models/rnnpb/transformer_lm.py)",
        choices=("lstm", "transformer"), legacy="lstm", only=("amortize", ("encoder",)))
    pb_slots: int = option(4, "--language_model=transformer: the PB is read as this many vectors of --units (see "
                              "--pb_read)", 1, 1e4, legacy=4, only=("language_model", ("transformer",)))
    pb_read: str = option(
        "slots", "--language_model=transformer: how the decoder reads the PB's --pb_slots vectors: slots (by "
        "cross-attention in every layer) or prefix (as positions before the sentence's first word, read by "
        "self-attention; the layers have no cross-attention)", choices=("slots", "prefix"), legacy="slots",
        only=("language_model", ("transformer",)))
    pb_pool: str = option(
        "mean", "--language_model=transformer: how the proposal's encoder outputs become the PB: mean (averaged "
        "over the sentence's real positions, SONAR's pooling; the proposed PBs then span at most --units "
        "dimensions) or attention (--pb_slots learned queries attend over them, one vector of --units each, "
        "each mapped to its --num_PB / --pb_slots numbers of the PB)", choices=("mean", "attention"), legacy="mean",
        only=("language_model", ("transformer",)))
    refine_step_size: float = option(0.1, "--amortize: initial per-dimension step size of the refinement "
                                          "(learned)", 0, 1e3, low_open=True, legacy=0.1, only=AMORTIZED)

    def __post_init__(self):
        if self.autoencode:  # one model is A and B, so there is one PB table
            object.__setattr__(self, "bind_hard", True)


@dataclasses.dataclass(frozen=True)
class TrainingOptions:
    pb_learning_rate: float = option(0.01, "PB learning rate (training and recognition)", 0, 1e3, low_open=True,
                                      only=TABLES)
    p_reset: float = option(0.0, "per-epoch PB reset probability", 0, 1, only=TABLES)
    double_shared_updates: bool = option(
        False, "as the thesis's code: a variable A and B share (the hard-bound PB table; every weight under "
        "--autoencode) gets two LazyAdam updates per step", legacy=False, only=TABLES)
    pb_prior: float = option(0.0, "Gaussian prior on PBs: adds pb_prior * ||p||^2 / 2 to each sentence's loss "
                                  "in training and in recognition (MAP recognition)", 0, 1e6, legacy=0.0, only=RNNPB)
    refine_gradient: str = option("full", "--amortize: full (differentiate through the refinement steps) or "
                                          "stop (treat each step's gradient as a constant: cheaper)",
                                  choices=("full", "stop"), legacy="full", only=AMORTIZED)
    encoder_binding: float = option(0.0, "--amortize=encoder: beta of beta * ||E_A(a) - E_B(b)||^2 / 2, which "
                                         "trains B's encoder for B->A translation", 0, 1e9, legacy=0.0,
                                   only=("amortize", ("encoder",)))
    p0_loss: float = option(0.0, "--amortize: weight of B's loss from the unrefined proposal, L_B(b | p0)", 0, 1e6,
                            legacy=0.0, only=AMORTIZED)
    self_loss: float = option(
        1.0, "--amortize, parallel pairs: weight of each language model's loss of its own sentence from the PB "
        "refined on it (A's of the source; with --both_directions also B's of the target); 0: a language model "
        "learns to generate only from the other language's PBs, as translation uses it", 0, 1e6, legacy=1.0,
        only=AMORTIZED)
    denoise_loss: float = option(
        0.0, "--amortize, parallel pairs: weight of a denoising auto-encoding term (SONAR's): each language model's "
        "loss of its own sentence from the PB recognised on a noised copy of it (each word deleted with "
        "probability 0.1, the rest shuffled, Lample et al. 2018's noise: sorted by position + U(0, 3), so no word "
        "moves 3 places or more); A's of the source, with "
        "--both_directions also B's of the target", 0, 1e6, legacy=0.0, only=AMORTIZED)
    pb_binding: str = option(
        "none", "--amortize, parallel pairs: bind the PB refined on the source in A and the PB refined on the target "
        "in B: none; soft (adds --pb_binding_strength * ||p_A(a) - p_B(b)||^2 / 2 to each pair's loss); mean (the "
        "pair has one PB in training, the mean of the two, from which A and B generate; translation still starts from "
        "the source's alone)", choices=("none", "soft", "mean"), legacy="none", only=AMORTIZED)
    pb_binding_strength: float = option(1.0, "--pb_binding=soft: its strength beta", 0, 1e9, legacy=1.0,
                                        only=("pb_binding", ("soft",)))
    both_directions: bool = option(
        False, "--amortize: also train B->A on every pair (B's refined PB of the target generates the source in "
        "A), so that one model translates both ways", legacy=False, only=AMORTIZED)


@dataclasses.dataclass(frozen=True)
class InferenceOptions:
    max_recog_epochs: int = option(100, "recognition iteration cap", 1, 1e6, only=TABLES)
    recog_stop: str = option("early", "recognition stopping: early (epsilon/patience), fixed, grad_norm",
                             choices=("early", "fixed", "grad_norm"), only=TABLES)
    recog_patience: int = option(3, "early: iterations without improvement", 1, 1e6, only=TABLES)
    recog_epsilon: float = option(1e-4, "early: smallest improvement that counts", 0, 1e9, only=TABLES)
    recog_grad_threshold: float = option(1.0, "grad_norm: stop below this gradient L2 norm", 0, 1e9,
                                          only=TABLES)
    # Working directories from before --recog_clip clipped at --gradient_clip, as None still does.
    recog_clip: typing.Optional[float] = option(
        None, "clip each sentence's recognition gradient to this L2 norm (default: --gradient_clip)", 0, 1e9,
        low_open=True, legacy=None, only=RNNPB)
    refine_steps: int = option(0, "--amortize: refinement steps of the proposed PB (training uses the saved "
                                  "value; a test may run others)", 0, 1000, legacy=0, only=AMORTIZED)
