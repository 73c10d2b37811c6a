"""The hard-attention transducer of Aharoni & Goldberg (2017), ``--model=hard_attention``.

Encoder: a bidirectional LSTM over ``<start>`` and the lemma's characters (the begin symbol is
the pointer's first position, as in the authors' code, so that what is written before the first
character, a prefix, is written while attending to it). Decoder: an LSTM stack whose input at
each step is ``[attended encoder state; embedding of the previous action]``, with the features'
vector as a constant input of its first layer (the paper's ``z_i = [x_a, f, y_{i-1}]``; a
constant part of the input is the same model, computed once, ``rnnpb_nmt/layers/recurrent.py``). It emits
characters and ``<step>`` actions; a step moves the pointer to the next encoder state
(``rnnpb_nmt/layers/hard_attention.py``). Trained by cross-entropy on the oracle action sequences the
inflection task gives as targets; decoded by the toolkit's greedy (the paper) or beam search.

The source sequence is the lemma's characters followed by the feature symbols
(``rnnpb_nmt/tasks/inflection/task.py``); the model splits it by symbol: the characters are the symbols
before the first feature, the features everything after them. The features' vector is the sum of
their embeddings: the paper concatenates one embedding per feature type, and a concatenation fed
to a linear layer is a sum of per-feature projections, which per-symbol embeddings learn directly
(and a sum needs no fixed list of feature types).

Two options follow the authors' code where the paper is silent (issue 94 tests each on dev):
``--tie_feedback`` embeds a previous action that wrote a character by that character's encoder
row, and the inflection task's ``--end_of_word`` adds an ``<end>`` position after the lemma that
the oracle steps onto before it stops.
"""

import tensorflow as tf

from rnnpb_nmt.data.symbols import STEP, is_feature_symbol
from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID, SPECIALS, START_ID
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.layers.bilstm import BidirectionalLSTM
from rnnpb_nmt.layers.hard_attention import advance, attend, forbid_step_past_end, teacher_forced_positions
from rnnpb_nmt.layers.recurrent import StackedRNN
from rnnpb_nmt.models.teacher_forced import TeacherForcedModel
from rnnpb_nmt.registry import register_model


@register_model("hard_attention")
class HardAttentionTransducer(TeacherForcedModel):
    """Bidirectional encoder, hard monotonic attention, feature-conditioned decoder."""

    def __init__(self, config, vocab1, vocab2):
        super().__init__(config, vocab1, vocab2)
        if STEP not in vocab2.stoi:
            raise UserError("--model=hard_attention writes step/write actions: it needs --task=inflection "
                            "(with --inflection_target=actions)")
        p = config.model
        self.step_id = vocab2.stoi[STEP]
        self.end_of_word = config.data.end_of_word
        # --tie_feedback: each action's row of char_embedding, -1 for those that keep their own.
        self.feedback_chars = tf.constant([vocab1.stoi.get(a, -1) if a not in SPECIALS + (STEP,) else -1
                                           for a in vocab2.itos]) if p.tie_feedback else None
        self.is_feature = tf.constant([is_feature_symbol(symbol) for symbol in vocab1.itos])
        self.char_embedding = tf.keras.layers.Embedding(len(vocab1), p.embedding_size, name="char_embedding")
        self.feature_embedding = tf.keras.layers.Embedding(len(vocab1), p.feature_size, name="feature_embedding")
        self.action_embedding = tf.keras.layers.Embedding(len(vocab2), p.embedding_size, name="action_embedding")
        self.encoder = BidirectionalLSTM(p.units, p.num_layers, dropout=p.dropout, name="encoder")
        self.decoder = StackedRNN(p.units, p.num_layers, dropout=p.dropout, constant_dim=p.feature_size,
                                   name="decoder")
        self.output_layer = tf.keras.layers.Dense(len(vocab2), name="output")
        # Build every weight now, so that checkpoints restore before the first call.
        self._target_logits(tf.constant([[END_ID]]), tf.constant([[END_ID]]))

    def split_source(self, src):
        """(lemma character ids (B, N) with ``<pad>`` after each lemma, lemma lengths (B,),
        feature mask (B, T)) of source batch ``src``."""
        boundary = tf.gather(self.is_feature, src) | tf.equal(src, END_ID) | tf.equal(src, PAD_ID)
        in_lemma = tf.equal(tf.cumsum(tf.cast(boundary, tf.int32), axis=1), 0)
        lengths = tf.reduce_sum(tf.cast(in_lemma, tf.int32), axis=1)
        chars = tf.where(in_lemma, src, PAD_ID)[:, :tf.reduce_max(lengths)]
        features = ~in_lemma & tf.not_equal(src, END_ID) & tf.not_equal(src, PAD_ID)
        return chars, lengths, features

    def encode(self, src, rng=None):
        """(encoder states (B, L + 1, 2 * units) of ``<start>``, the characters and, with
        --end_of_word, ``<end>``, the pointer's last positions L (B,): the lemma lengths, one more
        with --end_of_word; the features' vector (B, feature_size))."""
        chars, lengths, features = self.split_source(src)
        batch = tf.shape(src)[0]
        if self.end_of_word:
            padded = tf.concat([chars, tf.fill([batch, 1], PAD_ID)], axis=1)
            at_end = tf.equal(tf.range(tf.shape(padded)[1])[None, :], lengths[:, None])
            chars, lengths = tf.where(at_end, END_ID, padded), lengths + 1
        with_start = tf.concat([tf.fill([batch, 1], START_ID), chars], axis=1)
        encoded = self.encoder(self.char_embedding(with_start), lengths + 1, rng=rng)
        vector = tf.reduce_sum(self.feature_embedding(src) * tf.cast(features, tf.float32)[..., None], axis=1)
        return encoded, lengths, vector

    def _feedback(self, previous):
        """The previous actions' embeddings (with --tie_feedback, a character's is its encoder row)."""
        own = self.action_embedding(previous)
        if self.feedback_chars is None:
            return own
        chars = tf.gather(self.feedback_chars, previous)
        return tf.where((chars >= 0)[..., None], self.char_embedding(tf.maximum(chars, 0)), own)

    def _decoder_inputs(self, encoded, positions, previous):
        return tf.concat([attend(encoded, positions), self._feedback(previous)], axis=-1)

    def teacher_forced_logits(self, src, previous, rng=None):
        """Action logits (B, S, V2): the previous actions place the pointer (the steps among
        them), and a step is impossible where it is at the end."""
        encoded, lengths, features = self.encode(src, rng)
        positions = teacher_forced_positions(previous, self.step_id, lengths)
        outputs, _ = self.decoder(self._decoder_inputs(encoded, positions, previous), constant=features, rng=rng)
        return forbid_step_past_end(self.output_layer(outputs), positions, lengths[:, None], self.step_id)

    def decoder_start(self, src):
        encoded, lengths, features = self.encode(src)
        batch = tf.shape(src)[0]
        return {"encoded": encoded, "lengths": lengths, "feature_gates": self.decoder.constant_gates(features),
                "position": tf.zeros([batch], tf.int32), "lstm": self.decoder.zero_state(batch)}

    def decoder_step(self, tokens, state):
        """The previous action moves the pointer (a step) or not, then the decoder reads the
        state it is on; the new state carries the position."""
        position = advance(state["position"], tokens, self.step_id)
        output, lstm = self.decoder.step(self._decoder_inputs(state["encoded"], position, tokens), state["lstm"],
                                         extra_gates=state["feature_gates"])
        logits = forbid_step_past_end(self.output_layer(output), position, state["lengths"], self.step_id)
        return logits, dict(state, position=position, lstm=lstm)
