"""The transduction experiments of Grefenstette et al. 2015 (§4, Figure 2a), cell by cell, as data
for ``run_transduction.py``: every task × model, with the paper's figures beside them.

What differs from the paper (all for the 2-core CPU, where a cell must train within a budget of
minutes): hidden size and memory width 128 in every cell (the paper: LSTMs of 256 and of 512
units, reporting the better, and a memory width of 256; at 128 an 8-layer epoch already takes
27-84 s); training stops early on the dev perplexity, after --max_epochs, or at the budget (the
paper trained "an unbounded number of steps"); batches of 10, as the paper's. The cells first
recorded with the defaults below (one learning rate per optimiser: the memory LSTMs with the
paper's RMSProp at 0.005, ``MEMORY_TRAINING``, the Deep LSTMs with Adam at 0.002; a fixed sample
of 4000 training pairs; TRAIN_SECONDS) that fell short of the paper, and every cell of the paper's
own grammars, ran under the paper's protocol, as each cell's record says: RMSProp at 0.005 and
0.001 of its grid (5e-3..5e-5), the default seed and seeds 2 and 3, fresh pairs every epoch, 20
minutes a run (``run_transduction.py --learning_rates 0.005 0.001 --seeds 2 3
--train_flags="--fresh_data ..." --budget_minutes 20``). What was tried, when and why:
``run_scripts/results/notes/transduction.md``.
"""

# data/generate_transduction.py flags: the paper's 128 symbols, lengths 8-64 (train, dev, test)
# and 65-128 (test_long), 1000 test sequences each.
GENERATE = "--seed=1 --train=4000 --dev=200 --test=1000 --vocab_size=128".split()
# --max_trans_ratio=1.25: every target of the five tasks is as long as its source, so the search's
# cap of ceil(1.25 * length) output symbols (8 symbols: 10) never cuts off a right output, and
# the memory needs no room beyond it. --max_epochs=50: the time budget below or early stopping,
# not the cap, ends a cell (the cap of 8 before it: notes/transduction.md, 2026-11-24).
TRAINING = ("--do_training --task=transduction --embedding_size=64 --units=128 "
            "--batch_size=10 --gradient_clip=1.0 --beam_size=1 --max_trans_ratio=1.25 "
            "--early_stopping_steps=5 --max_epochs=50").split()
TESTING = ["--do_testing", "--device=cpu"]
# Training time of a cell (its finished epochs), so that with its two tests it fits in 30 minutes:
# run_transduction.py stops training (SIGTERM, resumable) when another epoch would not fit.
TRAIN_SECONDS = 25 * 60
# The two ITG tasks come twice (rnnpb_nmt/tasks/transduction/itg.py): the paper's own grammars (its
# Appendix C Table 1, at hand from 2026-12-05), which are Figure 2a's, and our earlier
# reconstructions from §4.2, whose recorded cells stay beside them.
FIGURE_2A = ("copy", "reverse", "bigram_flip", "svo_sov_paper", "gender_conjugation_paper")
TASKS = (*FIGURE_2A, "svo_sov", "gender_conjugation")
# Table 1's word classes have about 100 / k words for k classes (ours: 128 / k).
TASK_GENERATE = {task: ["--vocab_size=100"] for task in ("svo_sov_paper", "gender_conjugation_paper")}
# How the memory LSTMs are trained: the paper's RMSProp at 0.005, the top of its grid (5e-3..5e-5),
# with which they learned where Adam stalled (notes/transduction.md, 2026-11-24 to 2026-11-26).
MEMORY_TRAINING = ["--optimizer=rmsprop", "--learning_rate=0.005"]
# Flags that only one memory LSTM reads. --deque_biases=per_end (rnnpb_nmt/models/memory_lstm/model.py:
# initial_biases) starts the DeQue as a queue, which made it copy (a departure from the paper, whose
# Appendix B sets only the pop biases, at -1). Reversal needs it as a stack (the same biases at both
# ends), and at 0.001: at 0.005 it was unstable (notes/transduction.md, 2026-11-25 and 2026-11-26).
MEMORY_FLAGS = {"deque_lstm": ["--deque_biases=per_end"]}
TASK_FLAGS = {("reverse", "deque_lstm"): ["--deque_biases=same", "--learning_rate=0.001"]}
# Cell name -> its model flags: the Deep LSTM benchmark of 1, 2, 4 and 8 layers, and the memories
# (--memory_width only for them: a model that has no memory refuses it). The Deep LSTM is the
# paper's, every layer reading the input embedding too (--skip_connections=inputs: the stack whose
# size its Table 2 gives, tests/test_memorylstm_model.py); the cells recorded before 2026-12-06 ran
# a plain stack, as their commands say.
MODELS = {**{f"deep_lstm{n}": ["--model=deep_lstm", f"--num_layers={n}", "--skip_connections=inputs",
                               "--learning_rate=0.002"] for n in (1, 2, 4, 8)},
          **{name: [f"--model={name}", "--memory_width=128", *MEMORY_TRAINING, *MEMORY_FLAGS.get(name, [])]
             for name in ("stack_lstm", "queue_lstm", "deque_lstm")}}


def cell_flags(task, model):
    """The model flags of one cell: its model's, each that the task sets for it replaced."""
    return replaced(MODELS[model], TASK_FLAGS.get((task, model), []))


def replaced(flags, own):
    """``flags`` with each flag of ``own`` in place of the one of its name, the others added after."""
    names = {flag.split("=")[0] for flag in own}
    return [flag for flag in flags if flag.split("=")[0] not in names] + list(own)
# Figure 2a: (coarse, fine) on training-length and on longer test sequences, for the best Deep
# LSTM of each task (its layers) and the three memory LSTMs.
PAPER = {
    "copy": {"deep_lstm4": (0.98, 0.98, 0.01, 0.50), "stack_lstm": (0.89, 0.94, 0.00, 0.22),
             "queue_lstm": (1.00, 1.00, 1.00, 1.00), "deque_lstm": (1.00, 1.00, 1.00, 1.00)},
    "reverse": {"deep_lstm8": (0.95, 0.98, 0.04, 0.13), "stack_lstm": (1.00, 1.00, 1.00, 1.00),
                "queue_lstm": (0.44, 0.61, 0.00, 0.01), "deque_lstm": (1.00, 1.00, 1.00, 1.00)},
    "bigram_flip": {"deep_lstm2": (0.54, 0.93, 0.02, 0.52), "stack_lstm": (0.44, 0.90, 0.00, 0.48),
                    "queue_lstm": (0.55, 0.94, 0.55, 0.98), "deque_lstm": (0.55, 0.94, 0.53, 0.98)},
    "svo_sov": {"deep_lstm8": (0.98, 0.99, 0.98, 0.99), "stack_lstm": (1.00, 1.00, 1.00, 1.00),
                "queue_lstm": (1.00, 1.00, 1.00, 1.00), "deque_lstm": (1.00, 1.00, 1.00, 1.00)},
    "gender_conjugation": {"deep_lstm8": (0.98, 0.99, 0.99, 0.99), "stack_lstm": (0.93, 0.97, 0.93, 0.97),
                           "queue_lstm": (1.00, 1.00, 1.00, 1.00), "deque_lstm": (1.00, 1.00, 1.00, 1.00)},
}
# The figures are of the paper's grammars; our reconstructions' rows show them too, for comparison.
PAPER["svo_sov_paper"], PAPER["gender_conjugation_paper"] = PAPER["svo_sov"], PAPER["gender_conjugation"]
