"""The read-then-generate transducers' options: the memory LSTMs' memory, the Deep LSTM's skip
connections (it reads the core's layers and dropout too).
What an options module holds: ``rnnpb_nmt.options``."""

import dataclasses

from rnnpb_nmt.options import option

ORDER = 3
# Not --mixed_precision (float32 states and memories of their own); the memory LSTMs not --jit_compile
# either: their memories' loops have no bound XLA can compile.
READS = {"deep_lstm": ("num_layers", "dropout", "jit_compile")}
MEMORY_LSTMS = ("model", ("stack_lstm", "queue_lstm", "deque_lstm"))


@dataclasses.dataclass(frozen=True)
class ModelOptions:
    # The memory LSTMs' (stack_lstm, queue_lstm, deque_lstm); older runs have no memory.
    memory_width: int = option(256, "memory LSTMs: width m of the stack/queue/deque values (the paper: 256)",
                               1, 1e5, legacy=256, only=MEMORY_LSTMS)
    pop_bias: float = option(-1.0, "memory LSTMs: initial bias of the pop strengths (negative: pop little "
                             "at first)", -1e3, 1e3, legacy=-1.0, only=MEMORY_LSTMS)
    deque_biases: str = option(
        "same", "deque_lstm: initial push/pop biases of its two ends: same (each pushes at bias 0 and pops at "
        "--pop_bias) or per_end (the top pushes at 0 and pops at --deque_off_bias, the bottom pushes at "
        "--deque_off_bias and pops at --pop_bias: at first the deque acts as a queue, whose bottom reads older "
        "pushes, not only its last few)",
        choices=("same", "per_end"), legacy="same", only=("model", ("deque_lstm",)))
    deque_off_bias: float = option(
        -3.0, "deque_lstm --deque_biases=per_end: initial bias of the two operations a queue does not use, the "
        "top's pop and the bottom's push (lower: the deque starts closer to a queue and leaves it more slowly)",
        -1e3, 1e3, legacy=-3.0, only=("deque_biases", ("per_end",)))
    # The Deep LSTM's; older runs have a plain stack.
    skip_connections: str = option(
        "none", "deep_lstm: Graves's skip connections (rnnpb_nmt/layers/recurrent.py): inputs (every layer "
        "reads the input embedding as well as the layer below: Grefenstette et al.'s Deep LSTM, whose sizes "
        "their Table 2 gives), outputs (the output layer reads every layer's output), both, or none (a plain stack)",
        choices=("none", "inputs", "outputs", "both"), legacy="none", only=("model", ("deep_lstm",)))
