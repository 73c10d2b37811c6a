"""The bound RNNPB by name (``--preset``): the configurations a user asks for, defined once.

``bound``: the bound model configuration that translated best in issue 47's comparison
(``bound_pbstate_k1``, run_scripts/results/bound_translation.md): each language's encoder proposes
a sentence's PB (its final state), one gradient step on the language model refines it, the PB starts
the other language's model; the two PB spaces bound (soft, 0.1); one model, both directions. At the
sizes and learning rate of ``make demo``'s runs, which --num_PB=512 fits (the state of two layers
of 128 units); that comparison's sizes are the defaults with --num_PB=1024.

``thesis``: the thesis's Exp III bound RNNPB (listing 4, ``run_scripts/experiments.py``'s
``rnnpb20000``): PB tables bound hard, recognition by gradient descent as its code ran it (its dev
recognition: a fixed number of iterations, clipped at 8; it tested with ``--recog_clip=1.0``).
Flags given beside a preset replace its values.
"""

PRESETS = {
    "bound": ("the bound RNNPB configuration that translated best (issue 47), at the demo's size: an encoder's PB "
              "refined by one step, soft binding, one model both ways", dict(
                  model="rnnpbnmt", embedding_size=64, units=128, batch_size=32, learning_rate=0.005,
                  amortize="encoder", proposal_output="state", pb_input="state", proposal_layers=2, num_PB=512,
                  refine_steps=1, refine_step_size=0.3, both_directions=True, self_loss=0.0, pb_binding="soft",
                  pb_binding_strength=0.1)),
    "thesis": ("the thesis's Exp III bound RNNPB: PB tables bound hard, recognition by gradient descent", dict(
        model="rnnpbnmt", pb_learning_rate=0.01, binding_strength=1.0, bind_hard=True, max_recog_epochs=100,
        num_PB=1024, p_reset=0.1, dropout=0.4, vocab1_max=30000, vocab2_max=30000, double_shared_updates=True,
        recog_stop="fixed", recog_clip=8.0)),
}
