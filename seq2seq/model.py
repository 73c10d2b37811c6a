"""LSTM encoder-decoder without attention; the decoder starts from the encoder's final states."""

import tensorflow as tf

from nmtcore.lstm import StackedLSTM
from nmtcore.losses import decoder_inputs, summed_cross_entropy, token_mask
from nmtcore.model import NMTModel


class EncoderDecoder(NMTModel):
    """Encoder and decoder of equal size; h and c of every encoder layer initialise the decoder."""

    def __init__(self, config, vocab1, vocab2):
        super().__init__(config, vocab1, vocab2)
        p = config.model
        self.src_embedding = tf.keras.layers.Embedding(len(vocab1), p.embedding_size, name="src_embedding")
        self.tgt_embedding = tf.keras.layers.Embedding(len(vocab2), p.embedding_size, name="tgt_embedding")
        self.encoder = StackedLSTM(p.units, p.num_layers, dropout=p.dropout, name="encoder")
        self.decoder = StackedLSTM(p.units, p.num_layers, dropout=p.dropout, name="decoder")
        self.output_layer = tf.keras.layers.Dense(len(vocab2), name="output")
        # Build every weight now, so that checkpoints restore before the first call.
        self.encode(tf.constant([[3]]))
        self.tgt_embedding.build([None])
        self.decoder.build([None, p.embedding_size])
        self.output_layer.build([None, p.units])

    def encode(self, src, rng=None):
        """Final (h, c) of each encoder layer after the last real token of each sentence.

        With ``reverse_source`` the words are reversed, keeping ``<end>`` last, and padding stays
        at the end, so the mask keeps it from touching the states.
        """
        mask = token_mask(src)
        if self.config.model.reverse_source:
            lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)
            src = tf.reverse_sequence(src, lengths - 1, seq_axis=1, batch_axis=0)
        _, states = self.encoder(self.src_embedding(src), mask=mask, rng=rng)
        return states

    def _target_logits(self, src, tgt, rng=None):
        outputs, _ = self.decoder(self.tgt_embedding(decoder_inputs(tgt)),
                                  initial_state=self.encode(src, rng), rng=rng)
        return self.output_layer(outputs)

    def sentence_losses(self, batch, kind, rng=None):
        logits = self._target_logits(batch["src"], batch["tgt"], rng)
        ce, tokens = summed_cross_entropy(logits, batch["tgt"])
        return ce, 0.0, {"cross_entropy": ce, "perplexity": tf.exp(ce / tokens)}

    def score_targets(self, batch):
        return summed_cross_entropy(self._target_logits(batch["src"], batch["tgt"]), batch["tgt"])

    def decoder_start(self, src, reverse):
        return self.encode(src)

    def decoder_step(self, tokens, state, reverse):
        output, state = self.decoder.step(self.tgt_embedding(tokens), state)
        return self.output_layer(output), state
