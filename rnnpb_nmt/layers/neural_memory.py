"""The differentiable Stack, Queue and DeQue of Grefenstette et al. 2015, §3.1-3.3.

A memory is a value matrix V (B, N, m) and a strength vector s (B, N): row i holds a value that
was pushed once and never changes; its strength says how much of it is still logically in the
memory. One step pops (the strengths fall, eq. 2/4/7/8), pushes (a new row, eq. 1/6/9) and reads
(a weighted sum of rows, eq. 3/5/10/11). Pops and reads walk the strengths from one end of the
memory: "how much lies between row i and that end" is an exclusive cumulative sum, so every step
is a few batched tensor operations, with no loop over the rows.

The three kinds differ only in where each of their heads pushes and where it pops and reads:

    stack  one head:  push at the top, pop and read at the top
    queue  one head:  push at the top, pop and read at the bottom
    deque  two heads: (top, top) and (bottom, bottom)

so they share one implementation, and the deque's top head is the stack's operation itself
(which is why the deque reduces to the stack when its bottom head is idle, and to the queue when
one pushes at the top and pops at the bottom; ``tests/test_memories.py`` checks both).

Storage: a preallocated buffer of ``capacity`` rows per pushing end and a step counter, not a
matrix that grows by one row per step. Fixed shapes let the step run in ``tf.scan`` and
``tf.while_loop`` inside ``tf.function`` for any sequence length, without shape invariants, and
in a decoding loop without retracing. Rows not yet written have value 0 and strength 0, and a
zero-strength row changes neither a pop (it adds 0 to every cumulative sum) nor a read (its
weight min(0, .) is 0): the buffer computes exactly the paper's growing matrix. The price is
O(capacity) instead of O(t) work per step. The deque's buffer is 2 * capacity rows; it grows from
the middle, top pushes going up and bottom pushes going down, which keeps the paper's row order
(eq. 6: bottom value first, top value last).

Where max/min tie, TensorFlow's gradients flow to the left argument, as the paper's footnote 1
prescribes (``tf.nn.relu`` is max(0, x) with its left argument the constant).

The backward pass of a read needs the values the read saw, and a step's values are the whole
buffer: kept for every step of a sequence, they are O(T * capacity * m) of memory traffic, most of
a training step's time. Since a row, once written, never changes, and a row not yet written gets
no gradient (its strength is 0, and a min or relu at 0 sends none on; see ``read``), the backward
pass can take every step's values from the buffer after the sequence's last step instead: given
``final_values``, ``step`` keeps no values for its backward pass.
"""

from typing import NamedTuple

import tensorflow as tf

from rnnpb_nmt.errors import UserError

TOP, BOTTOM = "top", "bottom"


class Head(NamedTuple):
    """Where one (push d, pop u, value v) triple of the controller acts, and where its read is taken."""

    push: str
    pop: str


KINDS = {
    "stack": (Head(TOP, TOP),),
    "queue": (Head(TOP, BOTTOM),),
    "deque": (Head(TOP, TOP), Head(BOTTOM, BOTTOM)),
}


class MemoryState(NamedTuple):
    """V (B, rows, m), s (B, rows) and the number of steps taken (a scalar, shared by the batch)."""

    values: tf.Tensor
    strengths: tf.Tensor
    step: tf.Tensor


def strength_beyond(strengths, end):
    """For each row, the total strength between it and ``end`` (exclusive): sum_{j>i} s[j] for the
    top, sum_{j<i} s[j] for the bottom."""
    return tf.cumsum(strengths, axis=1, exclusive=True, reverse=end == TOP)


def pop(strengths, u, end):
    """Remove strength ``u`` (B, 1) from ``end``, nearest rows first (eq. 2, 4, 7, 8):
    s[i] <- max(0, s[i] - max(0, u - strength_beyond(s)[i]))."""
    return tf.nn.relu(strengths - tf.nn.relu(u - strength_beyond(strengths, end)))


def read(weights, values, final_values=None):
    """The reads (B, H, m) of heads with ``weights`` (B, H, rows) from ``values`` (B, rows, m).

    ``final_values``, if given, is a callable returning the buffer after the sequence's last step,
    transposed (B, m, rows), called only by the backward pass, whose gradient of the weights it
    computes from it rather than from ``values``, so that ``values`` is not kept for the backward
    pass. (Transposed once per sequence: on CPU a product by the transpose of a stored matrix,
    which this one would otherwise be, takes several times as long as by a stored one.) The two
    buffers differ only in rows written after this step, whose strength is 0 here; their weights'
    gradients then differ, but go nowhere: read_weights' min(s, .) sends a gradient only to s
    where s <= the other argument (always, at s = 0), and such an s is a relu at 0 of ``pop`` plus
    a push of 0 (its row was not written), which send none on. The gradients are the same as
    without it."""
    if final_values is None:
        return tf.einsum("bhn,bnm->bhm", weights, values)

    @tf.custom_gradient
    def reads(w, v):
        def gradient(upstream):
            return (tf.einsum("bhm,bmn->bhn", upstream, final_values()),
                    tf.einsum("bhn,bhm->bnm", w, upstream))
        return tf.einsum("bhn,bnm->bhm", w, v), gradient

    return reads(weights, values)


def read_weights(strengths, ends):
    """How much of each row a read from each of ``ends`` takes (B, len(ends), rows): a total of at
    most 1, nearest rows first (the weights of eq. 3, 5, 10, 11):
    min(s[i], max(0, 1 - strength_beyond(s)[i])), for all ends in one pass."""
    beyond = tf.stack([strength_beyond(strengths, end) for end in ends], axis=1)
    return tf.minimum(strengths[:, None], tf.nn.relu(1.0 - beyond))


class Memory:
    """A stack, queue or deque: ``Memory(kind)`` with ``kind`` one of ``KINDS``.

    ``step(state, d, u, v)`` takes, per head, push strengths d (B, H), pop strengths u (B, H) and
    values v (B, H, m), H = ``len(self.heads)`` (1, or 2 for the deque: top then bottom), and
    returns (next state, reads (B, H, m)); ``final_values`` as for ``read``.
    """

    def __init__(self, kind):
        if kind not in KINDS:
            raise UserError(f"memory kind {kind!r}: must be one of {', '.join(KINDS)}")
        self.kind, self.heads = kind, KINDS[kind]
        # Only the deque pushes at the bottom; the others need no room below their first row.
        self.two_sided = any(head.push == BOTTOM for head in self.heads)

    def initial_state(self, batch, capacity, width, dtype=tf.float32):
        """An empty memory with room for ``capacity`` steps of values of ``width`` (r_0 and
        (V_0, s_0) are zero, §3.4)."""
        rows = 2 * capacity if self.two_sided else capacity
        return MemoryState(tf.zeros([batch, rows, width], dtype), tf.zeros([batch, rows], dtype),
                           tf.constant(0, tf.int32))

    def step(self, state, d, u, v, final_values=None):
        """One time step: all pops (in head order: the deque pops its top first, eq. 7-8), then
        all pushes (eq. 1, 9), then the reads from the new strengths."""
        strengths = state.strengths
        for head, head_u in zip(self.heads, tf.split(u, len(self.heads), axis=1)):
            strengths = pop(strengths, head_u, head.pop)
        rows = tf.shape(strengths)[1]
        capacity = rows // 2 if self.two_sided else rows
        tf.debugging.assert_less(state.step, capacity, message="memory full: initial_state's capacity is too small")
        # The rows the heads write (H,) are empty (strength and value 0), so adding writes them.
        # The values, the step's largest tensor, are copied once by the scatter (whose gradient
        # passes theirs through untouched) and read once by all heads' reads together.
        written = tf.stack([self._push_row(head.push, state.step, capacity) for head in self.heads])
        indices = _row_indices(tf.shape(v)[0], written)
        strengths = tf.tensor_scatter_nd_add(strengths, indices, d)
        values = tf.tensor_scatter_nd_add(state.values, indices, v)
        weights = read_weights(strengths, [head.pop for head in self.heads])
        return MemoryState(values, strengths, state.step + 1), read(weights, values, final_values)

    def _push_row(self, end, step, capacity):
        """The buffer row that step ``step`` writes at ``end``."""
        if not self.two_sided:
            return step
        return capacity + step if end == TOP else capacity - 1 - step


def _row_indices(batch, rows):
    """(B, H, 2) indices of row ``rows[h]`` of every sequence b, for a scatter into (B, rows, ...)."""
    heads = tf.shape(rows)[0]
    return tf.stack([tf.tile(tf.range(batch)[:, None], [1, heads]), tf.tile(rows[None, :], [batch, 1])], axis=-1)
