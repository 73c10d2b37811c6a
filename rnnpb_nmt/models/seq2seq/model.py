"""Encoder-decoder of LSTM, GRU or SRN layers, with or without attention (McCoy et al. 2018).

Without attention (the default, Sutskever et al. 2014) the decoder starts from the encoder's
final states and sees the source only through them. With ``--attention=location|content`` it
also starts from them, and at each step the previous word's embedding and the previous top
decoder state weigh the encoder outputs (``rnnpb_nmt.layers.attention``); their weighted sum joins the
previous word as the input of the decoder's first layer (the paper's eq. 2). With
``--decoder_input=combined`` that input is McCoy et al.'s code's instead: a linear layer maps
[embedding; context] back to the embedding size and a ReLU follows (without attention: the ReLU
of the embedding); ``--embedding_init=normal`` draws the embeddings as PyTorch does, N(0, 1).

Two options make it the soft-attention baseline of Aharoni & Goldberg 2017 ("our implementation
of the global (soft) attention model presented by Luong et al. (2015)", over the bi-LSTM encoder
both their models share): ``--bidirectional`` encodes with forward and backward stacks
(``rnnpb_nmt.layers.bilstm``; outputs 2 * units wide; the decoder starts from the forward stack's final
states, as it starts from the encoder's without it), and ``--attention_style=luong`` attends
*after* the decoder step: the new top state h_t weighs the encoder outputs (the same weighing
layers, with h_t as the query), and tanh(W_c [h_t; context]) is the output the word is predicted
from; the decoder's input is the previous word alone (Luong's input feeding is not used, nor by
the authors' code).
"""

import functools

import tensorflow as tf

from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.layers.attention import ContentAttention, LocationAttention
from rnnpb_nmt.layers.bilstm import BidirectionalLSTM
from rnnpb_nmt.layers.recurrent import StackedRNN
from rnnpb_nmt.layers.transformer import dropout_of
from rnnpb_nmt.models.losses import decoder_inputs, reverse_words, token_mask
from rnnpb_nmt.models.teacher_forced import TeacherForcedModel
from rnnpb_nmt.registry import register_model


# The words McCoy et al.'s code ends a free-running batch on (its question-formation sentences end
# with one of them, and it has no end symbol); ours end with one of them and then <end>.
SENTENCE_ENDS = (".", "?")


def cut_after_first_end(tgt, predicted, ends):
    """``tgt`` (B, T) padded out after the first step at which the batch's first pair's greedy
    prediction (``predicted`` (T, B), each step's predictions) is one of the ids ``ends``: McCoy et
    al.'s code ends a free-running batch there and scores only the steps taken. All of ``tgt`` when
    it never is, or when the batch is empty (a replica's share of a short batch under --distribute)."""
    steps = tf.shape(tgt)[1]
    first = predicted[:, :1]  # (T, 1), or (T, 0) for an empty batch
    ended = tf.reduce_any(tf.reduce_any(tf.equal(first[:, :, None], tf.constant(ends, first.dtype)), axis=-1), axis=1)
    last = tf.where(tf.reduce_any(ended), tf.argmax(tf.cast(ended, tf.int32), output_type=tf.int32), steps - 1)
    return tf.where(tf.range(steps)[None, :] <= last, tgt, tf.zeros_like(tgt) + PAD_ID)


def embedding_init(options):
    """A new initializer of an embedding table (one instance per table: an unseeded Keras initializer
    gives the same values every time it is called)."""
    return tf.keras.initializers.RandomNormal(stddev=1.0) if options.embedding_init == "normal" else "uniform"


@register_model("encdec")
class EncoderDecoder(TeacherForcedModel):
    """Encoder and decoder of equal size; every encoder layer's final state initialises the decoder's."""

    def __init__(self, config, vocab1, vocab2):
        super().__init__(config, vocab1, vocab2)
        if config.training.free_running_cut and config.training.teacher_forcing == 1:
            raise UserError("--free_running_cut: only with --teacher_forcing below 1 (this run: --teacher_forcing=1); "
                            "it would be ignored")
        p = config.model
        self.src_embedding = tf.keras.layers.Embedding(len(vocab1), p.embedding_size,
                                                       embeddings_initializer=embedding_init(p), name="src_embedding")
        self.tgt_embedding = tf.keras.layers.Embedding(len(vocab2), p.embedding_size,
                                                       embeddings_initializer=embedding_init(p), name="tgt_embedding")
        encoder = BidirectionalLSTM if p.bidirectional else StackedRNN
        words = p.dropout_style == "decoder_words"
        self.word_dropout, recurrent_dropout = (p.dropout, 0.0) if words else (0.0, p.dropout)
        self.encoder = encoder(p.units, p.num_layers, cell=p.cell, dropout=recurrent_dropout, name="encoder")
        self.decoder = StackedRNN(p.units, p.num_layers, cell=p.cell, dropout=recurrent_dropout, name="decoder")
        self.output_layer = tf.keras.layers.Dense(len(vocab2), name="output")
        context = p.units * (2 if p.bidirectional else 1)  # the width of an encoder output
        self.luong = self.attentive and p.attention_style == "luong"
        self.combined = p.decoder_input == "combined"
        read = p.embedding_size + (context if self.attentive and not self.luong else 0)  # [embedding; context]
        self.decoder_input_size = p.embedding_size if self.combined else read
        # Build every weight now, so that checkpoints restore before the first call (in the order
        # of the models before attention, so that their initial weights stay the same).
        self.encode(tf.constant([[3]]))
        self.tgt_embedding.build([None])
        self.decoder.build([None, self.decoder_input_size])
        self.output_layer.build([None, p.units])
        if self.attentive:
            self.attention = (LocationAttention(p.attention_positions, p.attention_padding, name="attention")
                              if p.attention == "location" else ContentAttention(p.units, name="attention"))
            self.attention.build_for(p.units if self.luong else p.embedding_size + p.units, context)
        if self.luong:  # Luong et al.'s W_c: the attentional state from the decoder state and the context
            self.attentional = tf.keras.layers.Dense(p.units, activation="tanh", use_bias=False, name="attentional")
            self.attentional.build([None, p.units + context])
        if self.combined and read > p.embedding_size:  # McCoy et al.'s attn_combine
            self.combine = tf.keras.layers.Dense(p.embedding_size, name="combine")
            self.combine.build([None, read])
        if p.weight_init == "pytorch":
            self._initialise_as_pytorch()

    def _initialise_as_pytorch(self):
        """--weight_init=pytorch: every weight but the embeddings drawn again as PyTorch draws it
        (McCoy et al.'s code kept its defaults): a recurrent layer's weights and biases uniform within
        ±1/sqrt(units) (nn.GRU, nn.LSTM, nn.RNN; the LSTM's and SRN's one bias the sum of two such
        draws, as PyTorch's two are added), a linear layer's within ±1/sqrt(its inputs) (nn.Linear),
        content attention's v within ±1. Our content attention is their one linear
        layer over [encoder output; query] split in two (keys, queries): both take its bound."""
        def uniform(variables, bound):
            for v in variables:
                v.assign(tf.random.uniform(v.shape, -bound, bound, dtype=v.dtype))

        p = self.config.model
        stacks = [self.encoder.forward_lstm, self.encoder.backward_lstm] if p.bidirectional else [self.encoder]
        for stack in [*stacks, self.decoder]:
            bound = stack.units ** -0.5
            uniform([*stack.kernels, *stack.recurrent_kernels], bound)
            for bias in stack.biases:
                if bias.shape.rank == 2:  # the GRU keeps PyTorch's two biases (input, recurrent) apart
                    uniform([bias], bound)
                else:  # the LSTM's and SRN's one bias stands for PyTorch's b_ih + b_hh: two draws summed
                    bias.assign(sum(tf.random.uniform(bias.shape, -bound, bound, dtype=bias.dtype) for _ in range(2)))
        linear = [self.output_layer, *(getattr(self, name) for name in ("attentional", "combine") if hasattr(self, name))]
        if isinstance(getattr(self, "attention", None), LocationAttention):
            linear.append(self.attention.scorer)
        for layer in linear:
            uniform(layer.trainable_weights, int(layer.kernel.shape[0]) ** -0.5)
        if isinstance(getattr(self, "attention", None), ContentAttention):
            fan_in = int(self.attention.keys.kernel.shape[0]) + int(self.attention.queries.kernel.shape[0])
            uniform([*self.attention.keys.trainable_weights, *self.attention.queries.trainable_weights], fan_in ** -0.5)
            uniform([self.attention.v], 1.0)

    @property
    def attentive(self):
        """Whether the decoder attends to the encoder outputs (--attention other than none)."""
        return self.config.model.attention != "none"

    def _run_encoder(self, src, rng=None):
        """(outputs (B, S, units), final state per layer, source mask (B, S)).

        With ``reverse_source`` the words are reversed, keeping ``<end>`` last, and padding stays
        at the end, so the mask keeps it from touching the states and from being attended to.
        """
        mask = token_mask(src)
        lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)
        if self.config.model.reverse_source:
            src = reverse_words(src)
        if self.config.model.bidirectional:
            outputs, states = self.encoder(self.src_embedding(src), lengths, rng=rng, return_state=True)
        else:
            outputs, states = self.encoder(self.src_embedding(src), mask=mask, rng=rng)
        return outputs, states, mask

    def encode(self, src, rng=None):
        """Final state of each encoder layer after the last real token of each sentence."""
        return self._run_encoder(src, rng)[1]

    def _start(self, src, rng=None):
        """The decoder's initial state: the encoder's final states (and, with attention, the
        memory of the encoder outputs every step attends to)."""
        if not self.attentive:
            return self.encode(src, rng)
        outputs, states, mask = self._run_encoder(src, rng)
        return states, self.attention.memory(outputs, mask)

    def _attentive_step(self, embedded, state, dropout_masks=None):
        """One decoder step with attention: (what the word is predicted from, new state)."""
        states, memory = state
        if self.luong:
            output, states = self.decoder.step(self._decoder_input(embedded), states, dropout_masks=dropout_masks)
            return self._attentional(output, memory), (states, memory)
        context, _ = self.attention(tf.concat([embedded, states[-1][0]], axis=-1), memory)
        output, states = self.decoder.step(self._decoder_input(embedded, context), states, dropout_masks=dropout_masks)
        return output, (states, memory)

    def _decoder_input(self, embedded, context=None):
        """What the decoder's recurrent unit reads at a step (or at every step: the last axis is the
        features'): the previous word's embedding, with Bahdanau attention ``context`` beside it;
        with ``--decoder_input=combined`` mapped back to the embedding size (when there is a context)
        and through a ReLU, as McCoy et al.'s decoder."""
        read = embedded if context is None else tf.concat([embedded, context], axis=-1)
        if not self.combined:
            return read
        return tf.nn.relu(read if context is None else self.combine(read))

    def _attentional(self, output, memory):
        """Luong et al.'s attentional state tanh(W_c [h_t; context]) of top decoder outputs (N, units)."""
        context, _ = self.attention(output, memory)
        return self.attentional(tf.concat([output, context], axis=-1))

    def _luong_outputs(self, embedded, state, rng):
        """Teacher forcing with Luong attention: the decoder's input is the previous word alone, so
        it runs over the whole targets at once; then each step attends with its top output."""
        states, memory = state
        outputs, _ = self.decoder(self._decoder_input(embedded), initial_state=states, rng=rng)
        attentional = tf.map_fn(lambda h: self._attentional(h, memory), tf.transpose(outputs, [1, 0, 2]))
        return tf.transpose(attentional, [1, 0, 2])

    def _attentive_outputs(self, embedded, state, rng):
        """Teacher forcing with (Bahdanau) attention: the decoder steps one by one (each step's
        context depends on the previous state), with one dropout mask per sentence as without
        attention."""
        states, memory = state
        batch = tf.shape(embedded)[0]
        masks = self.decoder.dropout_masks(batch, self.decoder_input_size, rng)

        def body(carry, x):
            output, (states, _) = self._attentive_step(x, (carry[1], memory), masks)
            return output, states

        outputs, _ = tf.scan(body, tf.transpose(embedded, [1, 0, 2]),
                             initializer=(tf.zeros([batch, self.config.model.units]), states))
        return tf.transpose(outputs, [1, 0, 2])

    def _free_running(self, src, tgt, rng):
        """Training without teacher forcing: each step reads the embedding of the word the decoder
        itself predicted (greedily) at the step before, as McCoy et al.'s code trained on half of its
        batches; each step's prediction is still scored against the target's word there. Returns
        the logits and the targets they are scored against: ``tgt``, or with --free_running_cut
        ``tgt`` padded out after the step where the batch's first pair predicted the end of its
        sentence (``<end>``, or a word of SENTENCE_ENDS)."""
        start = self._start(src, rng)
        states, memory = start if self.attentive else (start, None)
        batch = tf.shape(tgt)[0]
        masks = self.decoder.dropout_masks(batch, self.decoder_input_size, rng)
        word_masks = self._word_masks([tf.shape(tgt)[1], batch, self.config.model.embedding_size], rng)

        def body(carry, step):
            # The attention memory stays out of the carry: tf.scan would stack a copy per step.
            _, tokens, states = carry
            word_mask = None if word_masks is None else step
            logits, state = self._word_step(tokens, (states, memory) if self.attentive else states, masks, word_mask)
            return logits, tf.argmax(logits, axis=-1, output_type=tokens.dtype), state[0] if self.attentive else state

        first = decoder_inputs(tgt)[:, 0]  # <start>
        logits, predicted, _ = tf.scan(body, tf.transpose(tgt) if word_masks is None else word_masks, initializer=(
            tf.zeros([batch, len(self.vocab2)]), first, states))
        logits = tf.transpose(logits, [1, 0, 2])
        if not self.config.training.free_running_cut:
            return logits, tgt
        ends = [END_ID, *(self.vocab2.stoi[word] for word in SENTENCE_ENDS if word in self.vocab2.stoi)]
        return logits, cut_after_first_end(tgt, predicted, ends)

    def _scored_targets(self, src, tgt, rng=None):
        """Teacher-forced, but in training with ``--teacher_forcing`` below 1 only on that share
        of the batches, the others free-running."""
        teacher_forced = functools.partial(self._target_logits, src, tgt, rng)
        forcing = self.config.training.teacher_forcing
        if rng is not None and forcing < 1:  # training: a coin per batch, from the epoch's generator
            return tf.cond(rng.uniform([]) < forcing, lambda: (teacher_forced(), tgt),
                           lambda: self._free_running(src, tgt, rng))
        return teacher_forced(), tgt

    def _word_masks(self, shape, rng):
        """--dropout_style=decoder_words: a dropout mask of ``shape`` for the decoder's input word
        embeddings, drawn anew for every step and element (training only: None without ``rng``)."""
        if rng is None or not self.word_dropout:
            return None
        return dropout_of(self.word_dropout, rng)(tf.ones(shape))

    def teacher_forced_logits(self, src, previous, rng=None):
        embedded = self.tgt_embedding(previous)
        word_masks = self._word_masks(tf.shape(embedded), rng)
        if word_masks is not None:
            embedded *= word_masks
        if self.attentive:
            teacher_forced = self._luong_outputs if self.luong else self._attentive_outputs
            outputs = teacher_forced(embedded, self._start(src, rng), rng)
        else:
            outputs, _ = self.decoder(self._decoder_input(embedded), initial_state=self._start(src, rng), rng=rng)
        return self.output_layer(outputs)

    def decoder_start(self, src):
        return self._start(src)

    def decoder_step(self, tokens, state):
        return self._word_step(tokens, state)

    def _word_step(self, tokens, state, dropout_masks=None, word_mask=None):
        """One decoder step from the previous words (N,): (logits (N, V), new state); the search's
        step, and with ``dropout_masks`` (and ``word_mask``) training's without teacher forcing."""
        embedded = self.tgt_embedding(tokens)
        if word_mask is not None:
            embedded *= word_mask
        if self.attentive:
            output, state = self._attentive_step(embedded, state, dropout_masks)
        else:
            output, state = self.decoder.step(self._decoder_input(embedded), state, dropout_masks=dropout_masks)
        return self.output_layer(output), state
