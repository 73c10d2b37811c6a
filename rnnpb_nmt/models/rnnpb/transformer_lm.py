"""The bound model with Transformer language models (``--language_model=transformer``): SONAR's
design (Duquenne et al. 2023: a Transformer encoder and decoder per language, one fixed-size
sentence vector between them, the languages' vectors pulled together by an MSE term) inside the
thesis's frame, where the vector is a PB that the language model itself refines.

- The language model is a Transformer decoder that reads its sentence's PB as --pb_slots vectors
  of --units numbers, a learned linear map of the PB: a few slots give the attention something to
  choose among, which a single vector would not. --pb_read=slots reads them by cross-attention in
  every layer; --pb_read=prefix puts them before the sentence's first word, where self-attention
  reads them (a decoder-only language model with a prompt; its layers have no cross-attention).
- The proposal is a Transformer encoder over the sentence, its outputs pooled to a fixed size and
  mapped linearly to the PB. --pb_pool=mean averages them over the real positions (SONAR's pooling):
  the proposals then lie in a space of --units dimensions, whatever --num_PB is. --pb_pool=attention
  lets --pb_slots learned queries attend over them (the pooling of Lee et al. 2019's Set Transformer),
  each slot's vector mapped to its --num_PB / --pb_slots numbers of the PB, so that the proposals span
  as many dimensions as the PB has.
- Refinement, binding, both directions and translation are the bound model's
  (``rnnpb_nmt.models.rnnpb.model``): the language model answers the same three calls as the LSTM
  one, ``sentence_losses``, ``start_state`` and ``step``.
"""

import tensorflow as tf

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.layers.transformer import (EPSILON, Attention, DecoderLayer, EncoderLayer, WordEmbedding, causal_mask,
                                          decode, dropout_of, output_layer, start_caches)
from rnnpb_nmt.models.losses import decoder_inputs, summed_cross_entropy, token_mask


class TransformerPBLanguageModel(tf.Module):
    """Word embedding with positions, ``num_layers`` pre-norm decoder layers attending causally to the
    words so far and to the PB's slots (``read``: by cross-attention, or as a prefix), a last
    LayerNorm and the output layer (``tie``: the word embedding's table, --tie_embeddings)."""

    def __init__(self, vocab_size, embedding_size, units, num_layers, heads, hidden, num_pb, slots, dropout=0.0,
                 sigma=0.0, label_smoothing=0.0, read="slots", tie=False, name=None):
        super().__init__(name=name)
        self.units, self.slots, self.dropout, self.sigma = units, slots, dropout, sigma
        self.label_smoothing = label_smoothing
        self.prefix = slots if read == "prefix" else 0  # positions before the first word
        self.embedding = WordEmbedding(vocab_size, embedding_size, units, "embedding")
        self.slot_map = tf.keras.layers.Dense(slots * units, name="slots")
        self.decoder_layers = [DecoderLayer(units, heads, hidden, f"decoder_{i}", cross=not self.prefix)
                               for i in range(num_layers)]
        self.norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="norm")
        self.output_layer = output_layer(self.embedding, vocab_size, tie)
        self.sentence_losses(tf.constant([[3, 2]]), tf.zeros([1, num_pb]))  # builds every weight now

    def _memory(self, pb):
        """The PBs (B, num_PB) as the slots (B, slots, units) the decoder attends to."""
        return tf.reshape(self.slot_map(pb), [tf.shape(pb)[0], self.slots, self.units])

    def sentence_losses(self, seq, pb, rng=None):
        """Summed cross-entropy (B,) of sentences ``seq`` given their PBs, and the number of predicted
        tokens (B,); in training (``rng``) with PB noise, dropout and label smoothing, as the LSTM
        language model's."""
        if rng is not None and self.sigma > 0:
            pb = pb + rng.normal(tf.shape(pb), stddev=self.sigma)
        dropout = dropout_of(self.dropout, rng)
        previous = decoder_inputs(seq)
        x = dropout(self.embedding(previous, start=self.prefix))
        if self.prefix:  # the slots first, each position seeing those before it, as generation's cache
            x = tf.concat([self._memory(pb), x], axis=1)
            x, _ = decode(self.decoder_layers, x, None, None, None, causal_mask(tf.shape(x)[1]), dropout)
            x = x[:, self.prefix:]
        else:
            x, _ = decode(self.decoder_layers, x, None, self._memory(pb), None, causal_mask(tf.shape(previous)[1]),
                          dropout)
        logits = self.output_layer(self.norm(x))
        return summed_cross_entropy(logits, seq, self.label_smoothing if rng is not None else 0.0)

    def start_state(self, pb):
        """Generation state for PBs (N, num_PB): the decoder layers' search caches, holding the slots'
        keys and values for the cross-attention, or with a prefix the slots' positions."""
        if not self.prefix:
            return {"past": start_caches(self.decoder_layers, tf.shape(pb)[0], self._memory(pb))}
        _, past = decode(self.decoder_layers, self._memory(pb), start_caches(self.decoder_layers, tf.shape(pb)[0]),
                         None, None, causal_mask(self.prefix), lambda x: x)
        return {"past": past}

    def step(self, tokens, state):
        """Next-word logits after ``tokens`` (N,), and the state with this position cached."""
        x = self.embedding(tokens[:, None], start=tf.shape(state["past"][0]["keys"])[1])
        x, caches = decode(self.decoder_layers, x, state["past"], None, None, None, lambda x: x)
        return self.output_layer(self.norm(x))[:, 0], {**state, "past": caches}


class TransformerProposal(tf.Module):
    """A sentence's proposed PB: a Transformer encoder's outputs, pooled (``pool``: averaged over the
    sentence's real positions, or read by ``slots`` learned queries), mapped linearly to --num_PB
    numbers."""

    def __init__(self, vocab_size, embedding_size, units, num_layers, heads, hidden, num_pb, pool="mean", slots=1,
                 dropout=0.0, name=None):
        super().__init__(name=name)
        self.dropout = dropout
        self.embedding = WordEmbedding(vocab_size, embedding_size, units, "embedding")
        self.encoder_layers = [EncoderLayer(units, heads, hidden, f"encoder_{i}") for i in range(num_layers)]
        self.norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="norm")
        self.queries = None
        if pool == "attention":
            if num_pb % slots:
                raise UserError(f"--pb_pool=attention: each of the --pb_slots={slots} slots proposes --num_PB / "
                                f"--pb_slots numbers; give a --num_PB that is a multiple of {slots} (not {num_pb})")
            # One query a slot, of standard deviation 1: the size of the normed outputs it attends over.
            self.queries = tf.keras.layers.Embedding(slots, units, name="queries",
                                                     embeddings_initializer=tf.keras.initializers.RandomNormal())
            self.pooling = Attention(units, heads, "pooling")
        # Attention pooling: one map for every slot (its query says which slot it is), units -> its part of the
        # PB, rather than one of all slots together, which would cost slots^2 times the weights.
        self.output_layer = tf.keras.layers.Dense(num_pb if self.queries is None else num_pb // slots, name="output")
        self(tf.constant([[3, 2]]))  # builds every weight now

    def __call__(self, seq, rng=None):
        """Proposed PBs (B, num_PB) of sentences ``seq`` (B, T); in training (``rng``) with dropout."""
        mask = token_mask(seq)
        dropout = dropout_of(self.dropout, rng)
        x = dropout(self.embedding(seq))
        for layer in self.encoder_layers:
            x = layer(x, mask[:, None, :], dropout)
        x = self.norm(x)
        if self.queries is None:
            real = tf.cast(mask, x.dtype)[:, :, None]
            return self.output_layer(tf.reduce_sum(x * real, axis=1) / tf.reduce_sum(real, axis=1))
        queries = self.queries(tf.range(self.queries.input_dim))
        queries = tf.tile(tf.cast(queries, x.dtype)[None], [tf.shape(x)[0], 1, 1])
        pooled = self.pooling(queries, x, mask[:, None, :])  # (B, slots, units)
        return tf.reshape(self.output_layer(pooled), [tf.shape(x)[0], -1])
