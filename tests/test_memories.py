"""The neural Stack, Queue and DeQue follow the equations of Grefenstette et al. 2015, §3.1-3.3."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.layers.neural_memory import Memory

# Every example runs eager TensorFlow step by step: a third of the profile's examples keeps the
# file at a few seconds (and still scales up under ``make fuzz``); no deadline, as the machine's
# load, not the program, decides how long an example takes.
fewer_examples = settings(max_examples=max(1, settings.default.max_examples // 3), deadline=None)


def run(kind, d, u, v, capacity=None):
    """Feed per-step strengths d, u (B, T, H) and values v (B, T, H, m) to a fresh memory.
    Returns the strengths after every step (B, T, rows) and the reads (B, T, H, m)."""
    memory = Memory(kind)
    d, u, v = (tf.constant(a, tf.float64) for a in (d, u, v))
    state = memory.initial_state(v.shape[0], capacity or v.shape[1], v.shape[-1], tf.float64)
    strengths, reads = [], []
    for t in range(v.shape[1]):
        state, r = memory.step(state, d[:, t], u[:, t], v[:, t])
        strengths.append(state.strengths)
        reads.append(r)
    return tf.stack(strengths, 1).numpy(), tf.stack(reads, 1).numpy()


def single_head(steps):
    """(d, u) per step -> arrays for one sequence and one head, with values v_t = e_t, so a read's
    coefficients can be read off directly."""
    du = np.array(steps, np.float64)
    n = len(steps)
    return du[None, :, None, 0], du[None, :, None, 1], np.eye(n)[None, :, None, :]


def test_stack_worked_example_of_figure_1a():
    # Figure 1a: (u, d) = (0, 0.8), (0.1, 0.5), (0.9, 0.9).
    # t=1: s = [0.8];                        r1 = 0.8 v1
    # t=2: s1 = max(0, 0.8 - max(0, 0.1 - 0)) = 0.7; s = [0.7, 0.5]
    #      weights: row 2 min(0.5, 1) = 0.5, row 1 min(0.7, max(0, 1 - 0.5)) = 0.5
    # t=3: s2 = max(0, 0.5 - max(0, 0.9 - 0)) = 0, s1 = max(0, 0.7 - max(0, 0.9 - 0.5)) = 0.3
    #      s = [0.3, 0, 0.9]; weights: 0.9, min(0, 0.1) = 0, min(0.3, max(0, 1 - 0.9)) = 0.1
    d, u, v = single_head([(0.8, 0.0), (0.5, 0.1), (0.9, 0.9)])
    strengths, reads = run("stack", d, u, v)
    np.testing.assert_allclose(strengths[0], [[0.8, 0, 0], [0.7, 0.5, 0], [0.3, 0, 0.9]], atol=1e-12)
    np.testing.assert_allclose(reads[0, :, 0], [[0.8, 0, 0], [0.5, 0.5, 0], [0.1, 0, 0.9]], atol=1e-12)


def test_queue_worked_example():
    # Same operations, popping and reading from the lowest index (eq. 4, 5).
    # t=1: s = [0.8];                        r1 = 0.8 v1
    # t=2: s1 = max(0, 0.8 - max(0, 0.1 - 0)) = 0.7; s = [0.7, 0.5]
    #      weights: row 1 min(0.7, 1) = 0.7, row 2 min(0.5, max(0, 1 - 0.7)) = 0.3
    # t=3: s1 = max(0, 0.7 - max(0, 0.9 - 0)) = 0, s2 = max(0, 0.5 - max(0, 0.9 - 0.7)) = 0.3
    #      s = [0, 0.3, 0.9]; weights: 0, min(0.3, 1) = 0.3, min(0.9, max(0, 1 - 0.3)) = 0.7
    d, u, v = single_head([(0.8, 0.0), (0.5, 0.1), (0.9, 0.9)])
    strengths, reads = run("queue", d, u, v)
    np.testing.assert_allclose(strengths[0], [[0.8, 0, 0], [0.7, 0.5, 0], [0, 0.3, 0.9]], atol=1e-12)
    np.testing.assert_allclose(reads[0, :, 0], [[0.8, 0, 0], [0.7, 0.3, 0], [0, 0.3, 0.7]], atol=1e-12)


def test_deque_worked_example():
    # t=1: push a (0.8) at the top and b (0.6) at the bottom: rows [b, a], s = [0.6, 0.8] (eq. 9).
    #      top read: a min(0.8, 1) = 0.8, b min(0.6, max(0, 1 - 0.8)) = 0.2
    #      bottom read: b 0.6, a min(0.8, max(0, 1 - 0.6)) = 0.4
    # t=2: pop 0.5 at the top, 0.3 at the bottom, push nothing.
    #      top pop (eq. 7): a max(0, 0.8 - max(0, 0.5 - 0)) = 0.3, b max(0, 0.6 - max(0, 0.5 - 0.8)) = 0.6
    #      bottom pop (eq. 8): b max(0, 0.6 - max(0, 0.3 - 0)) = 0.3, a max(0, 0.3 - max(0, 0.3 - 0.6)) = 0.3
    #      both reads: 0.3 a + min(0.3, 1 - 0.3) b = 0.3 a + 0.3 b
    a, b = [1.0, 0.0], [0.0, 1.0]
    d = np.array([[[0.8, 0.6], [0.0, 0.0]]])
    u = np.array([[[0.0, 0.0], [0.5, 0.3]]])
    v = np.array([[[a, b], [a, b]]])
    strengths, reads = run("deque", d, u, v)
    # The buffer grows from its middle (capacity 2: rows 0..3, the first pushes at rows 1 and 2).
    np.testing.assert_allclose(strengths[0], [[0, 0.6, 0.8, 0], [0, 0.3, 0.3, 0]], atol=1e-12)
    np.testing.assert_allclose(reads[0, 0], [[0.8, 0.2], [0.4, 0.6]], atol=1e-12)
    np.testing.assert_allclose(reads[0, 1], [[0.3, 0.3], [0.3, 0.3]], atol=1e-12)


@pytest.mark.parametrize("final", [False, True], ids=["", "backward_from_final_values"])
@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_gradients_match_finite_differences(kind, final):
    """With ``final``, the reads' backward pass takes the values from the memory after the last
    step (``neural_memory.read``): the gradients must be the same."""
    heads, steps, width = len(Memory(kind).heads), 3, 2
    rng = np.random.default_rng(5)
    inputs = [tf.constant(rng.uniform(size=shape)) for shape in
              ([1, steps, heads], [1, steps, heads], [1, steps, heads, width])]
    weights = tf.constant(rng.normal(size=[1, steps, heads, width]))

    def loss(d, u, v):
        memory = Memory(kind)
        state = memory.initial_state(1, steps, width, tf.float64)
        total, last = tf.constant(0.0, tf.float64), {}
        for t in range(steps):
            state, r = memory.step(state, d[:, t], u[:, t], v[:, t], (lambda: last["values"]) if final else None)
            total += tf.reduce_sum(r * weights[:, t])
        last["values"] = tf.transpose(state.values, [0, 2, 1])
        return total

    theoretical, numerical = tf.test.compute_gradient(loss, inputs, delta=1e-6)
    for analytic, numeric in zip(theoretical, numerical):
        np.testing.assert_allclose(analytic, numeric, atol=1e-7)


# Per head of each kind: the list index where it pops and reads, and whether it pushes in front.
LIST_ENDS = {"stack": [(-1, False)], "queue": [(0, False)], "deque": [(-1, False), (0, True)]}


def classical_reads(kind, ops):
    """What a discrete stack / queue / deque (a Python list) reads, for 0/1 strengths.

    ``ops`` per step: (push, pop) per head as bools; step t pushes the symbol t. Returns the read
    symbol per step and head (-1 when empty)."""
    items, reads = [], []
    for t, heads in enumerate(ops):
        for (_, pop), (end, _) in zip(heads, LIST_ENDS[kind]):
            if pop and items:
                items.pop(end)
        for (push, _), (_, front) in zip(heads, LIST_ENDS[kind]):
            if push:
                items.insert(0 if front else len(items), t)
        reads.append([items[end] if items else -1 for end, _ in LIST_ENDS[kind]])
    return reads


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_with_strengths_0_and_1_it_is_the_classical_structure(kind):
    heads = len(Memory(kind).heads)

    @fewer_examples
    @given(st.lists(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=heads, max_size=heads),
                    min_size=1, max_size=10))
    def check(ops):
        push_pop = np.array(ops, np.float64)  # (T, H, 2)
        steps = len(ops)
        values = np.broadcast_to(np.eye(steps)[:, None, :], (steps, heads, steps))
        _, reads = run(kind, push_pop[None, ..., 0], push_pop[None, ..., 1], values[None])
        symbols = np.where(reads[0].max(-1) > 0.5, reads[0].argmax(-1), -1)
        assert symbols.tolist() == classical_reads(kind, ops)
        # A discrete structure reads exactly one whole value or nothing.
        assert set(np.round(reads[0].sum(-1), 12).ravel()) <= {0.0, 1.0}

    check()


def random_operations(seed, batch, steps, heads, width=3):
    rng = np.random.default_rng(seed)
    return (rng.uniform(size=[batch, steps, heads]), rng.uniform(size=[batch, steps, heads]),
            rng.normal(size=[batch, steps, heads, width]))


@fewer_examples
@given(st.integers(0, 2**32 - 1), st.integers(1, 8))
def test_deque_with_an_idle_bottom_is_the_stack(seed, steps):
    d, u, v = random_operations(seed, 2, steps, 2)
    idle = np.zeros_like(d[..., :1])
    deque_s, deque_r = run("deque", np.concatenate([d[..., :1], idle], -1),
                           np.concatenate([u[..., :1], idle], -1), v)
    stack_s, stack_r = run("stack", d[..., :1], u[..., :1], v[..., :1, :])
    np.testing.assert_allclose(deque_r[..., 0, :], stack_r[..., 0, :], atol=1e-12)
    np.testing.assert_allclose(deque_s[..., steps:], stack_s, atol=1e-12)
    assert not deque_s[..., :steps].any()


@fewer_examples
@given(st.integers(0, 2**32 - 1), st.integers(1, 8))
def test_deque_pushed_at_the_top_and_popped_at_the_bottom_is_the_queue(seed, steps):
    d, u, v = random_operations(seed, 2, steps, 2)
    idle = np.zeros_like(d[..., :1])
    deque_s, deque_r = run("deque", np.concatenate([d[..., :1], idle], -1),
                           np.concatenate([idle, u[..., 1:]], -1), v)
    queue_s, queue_r = run("queue", d[..., :1], u[..., 1:], v[..., :1, :])
    np.testing.assert_allclose(deque_r[..., 1, :], queue_r[..., 0, :], atol=1e-12)
    np.testing.assert_allclose(deque_s[..., steps:], queue_s, atol=1e-12)


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_batched_equals_one_sequence_at_a_time(kind):
    heads = len(Memory(kind).heads)

    @fewer_examples
    @given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 6))
    def check(seed, batch, steps):
        d, u, v = random_operations(seed, batch, steps, heads)
        strengths, reads = run(kind, d, u, v)
        for b in range(batch):
            alone_s, alone_r = run(kind, d[b:b + 1], u[b:b + 1], v[b:b + 1])
            np.testing.assert_allclose(strengths[b:b + 1], alone_s, atol=1e-12)
            np.testing.assert_allclose(reads[b:b + 1], alone_r, atol=1e-12)

    check()


def test_unused_rows_of_a_larger_buffer_change_nothing():
    d, u, v = random_operations(3, 2, 5, 2)
    _, exact = run("deque", d, u, v)
    _, roomy = run("deque", d, u, v, capacity=9)
    np.testing.assert_allclose(roomy, exact, atol=1e-12)


def test_a_full_memory_is_an_error_not_a_lost_push():
    d, u, v = random_operations(4, 1, 3, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="memory full"):
        run("stack", d, u, v, capacity=2)


def test_unknown_kind_is_a_user_error():
    with pytest.raises(UserError, match="heap"):
        Memory("heap")
