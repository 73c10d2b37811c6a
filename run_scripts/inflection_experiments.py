"""The inflection experiments of Aharoni & Goldberg 2017 (tables 1-3), data set by data set, as data
for ``run_inflection.py``: SIGMORPHON 2016 (10 languages), CELEX (5 folds, each holding the 4
inflection types) and Wiktionary (the three sets we have), with the paper's figures beside them.

Every set, for each of the paper's two models (MODELS: ``hard``, its hard monotonic attention;
``soft``, its soft-attention baseline, table 3's "Soft" row): 5 models (seeds 1-5), each trained
within TRAIN_SECONDS and tested on dev; their majority vote (``--ensemble``, the paper's 5-model
ensembles) tested on dev; the vote's predictions (one protocol for every set: never a member chosen
by dev) for the set's ``*-covered`` test file kept under
``run_scripts/results/inflection/`` (hard) or ``run_scripts/results/inflection_soft/`` (soft).

The hard model's step/write oracle (ORACLE): alignments learned over the whole training set
(``--aligner=corpus``, in the spirit of the SIGMORPHON 2016 baseline's aligner that the paper
used), chosen on dev over our first, a Levenshtein alignment of each pair alone (issue 46; the
comparison per language: the results page and notes/inflection.md).

What differs from the paper, and why: Adam at 0.001 with batches of 32 (the paper: ADADELTA,
one example per update); early stopping after 5 epochs without a better dev perplexity of the
action sequences, within a budget of 40 minutes of training per model, enough for early
stopping, not the clock, to end every SIGMORPHON and CELEX model on the 2 shared cores (the paper:
up to 100 epochs, keeping the epoch of best dev accuracy); feature embeddings summed into one
vector of 100 (the paper: 20 per feature, concatenated). Character embeddings: 300, and 100 for
CELEX, as the paper.

The soft model (section 4: "our implementation of the global (soft) attention model presented by
Luong et al. (2015)"; its encoder is a bi-LSTM like the hard model's, section 5's 200-wide
encodings): ``--model=encdec --bidirectional --attention=content --attention_style=luong``
trained on the forms' characters (``--inflection_target=form``), with the hard model's sizes and
training (the paper: the same hyper-parameters for both; 2 layers of 100 units, character
embeddings 300 / 100), except that its early stopping counts epochs without a better dev
accuracy (MODELS). Our choices where the paper says nothing: the features are symbols of the
encoder's input after the lemma, embedded like its characters (the authors' code puts them
before it); the decoder starts from the forward encoder's final states (Luong et al.; the
authors' code starts from zeros); additive scores v . tanh(W_k e_j + W_q h_t + b) (Luong's
"concat" score, as the authors' code); no input feeding (nor in the authors' code). The paper
reports soft figures for SIGMORPHON only; CELEX and Wiktionary soft runs have no paper figure.
"""

TRAINING = ("--do_training --task=inflection --units=100 --num_layers=2 --batch_size=32 --learning_rate=0.001 "
            "--beam_size=1 --max_trans_ratio=3 --early_stopping_steps=5").split()
# The paper's two models: the flags that make each, the name its results are recorded under, and
# the folder of its working directories and test predictions.
MODELS = {
    "hard": {"flags": ["--model=hard_attention", "--feature_size=100"], "name": "hard_attention",
             "folder": "inflection"},
    # The soft model keeps the epoch of best dev accuracy, as the paper did (section 5), since its
    # dev perplexity jumps (run_scripts/results/notes/inflection.md, 2026-11-26).
    "soft": {"flags": ["--model=encdec", "--bidirectional", "--attention=content", "--attention_style=luong",
                       "--inflection_target=form", "--early_stopping_metric=score"], "name": "soft_attention",
             "folder": "inflection_soft"},
}
# The hard model's step/write oracle (nmt.py --aligner): the suffix of its runs' folder, the flags.
# corpus_early: the corpus aligner with crpalign's tie-breaking, insertions as early as possible
# (issue 94: CELEX's infinitive zu inserted before the stem; notes/inflection.md, 2026-12-06).
ALIGNERS = {"levenshtein": {"suffix": "", "flags": []},
            "corpus": {"suffix": "_corpus", "flags": ["--aligner=corpus"]},
            "corpus_early": {"suffix": "_corpus_early", "flags": ["--aligner=corpus_early"]}}
ORACLE = "corpus"  # the one protocol's (run_inflection.py's default for the hard model)
# The training recipes compared on dev (issue 94, item 1): the suffix of their runs' folder, the flags
# that follow TRAINING's (the later flag wins). "ours" is the one protocol's. "paper_stopping": the
# paper's model selection, the epoch of best dev accuracy within up to 100 epochs, with a patience
# of 20 epochs (ours stops after 5 epochs without a better dev perplexity of the oracle's actions;
# notes/inflection.md, 2026-12-07, the first difference that could cost accuracy). The next
# differences in that list, each on top of the paper's stopping so that one thing changes against
# it: "per_example", the paper's update after every example (batches of 1); "adadelta", its trainer
# too (ADADELTA, Zeiler's step); "tied_feedback" and "end_of_word", the authors' code's feedback
# embeddings and end-of-lemma position.
PAPER_STOPPING = ["--early_stopping_metric=score", "--early_stopping_steps=20", "--max_epochs=100"]
# "base": the recipe each changes one thing of, which the dev tables compare it with.
RECIPES = {"ours": {"suffix": "", "flags": [], "base": None},
           "paper_stopping": {"suffix": "_paper_stopping", "flags": PAPER_STOPPING, "base": "ours"},
           "per_example": {"suffix": "_per_example", "flags": [*PAPER_STOPPING, "--batch_size=1"],
                           "base": "paper_stopping"},
           "adadelta": {"suffix": "_adadelta",
                        "flags": [*PAPER_STOPPING, "--batch_size=1", "--optimizer=adadelta", "--learning_rate=1"],
                        "base": "per_example"},
           "tied_feedback": {"suffix": "_tied_feedback", "flags": [*PAPER_STOPPING, "--tie_feedback"],
                             "base": "paper_stopping"},
           "end_of_word": {"suffix": "_end_of_word", "flags": [*PAPER_STOPPING, "--end_of_word"],
                           "base": "paper_stopping"}}
RECIPE = "ours"
TESTING = ["--do_testing", "--device=cpu"]
# Training time of one model (its finished epochs): 40 minutes, where early stopping ended every
# member of the corpus aligner's votes (the Levenshtein members had 20; the corpus aligner's, some
# 37 epochs for Arabic, took up to 38 minutes: notes/inflection.md, 2026-11-28/29).
# The same for every set, so Wiktionary's larger sets (de_verb 44 k, nl_verb 80 k training lines,
# about 4 and 8 minutes an epoch) get few epochs; run_inflection.py --train_seconds gives more.
TRAIN_SECONDS = 40 * 60
SEEDS = (1, 2, 3, 4, 5)  # the ensemble's members, in the order that breaks the vote's ties

SIGMORPHON_LANGUAGES = ("russian", "german", "spanish", "georgian", "finnish", "turkish", "hungarian", "navajo",
                        "arabic", "maltese")  # table 3's order
# collection -> its folder under the data root, the character embedding size (section 4), and
# for each set its (train, dev, covered test) file names.
COLLECTIONS = {
    "sigmorphon2016": {"folder": "sigmorphon2016", "embedding_size": 300, "sets": {
        language: tuple(f"{language}-task1-{part}" for part in ("train", "dev", "test-covered"))
        for language in SIGMORPHON_LANGUAGES}},
    "celex": {"folder": "celex", "embedding_size": 100, "sets": {
        f"fold{n}": tuple(f"fold{n}.{part}" for part in ("train", "dev", "test-covered")) for n in range(5)}},
    "wiktionary": {"folder": "wiktionary", "embedding_size": 300, "sets": {
        name: tuple(f"{name}.{part}" for part in ("train", "dev", "test-covered"))
        for name in ("de_noun", "de_verb", "nl_verb")}},
}

# The paper's test accuracies (%) of its 5-model hard-attention ensembles, and beside them the
# other systems' of its tables. CELEX: one figure for the five folds (their average), the mean of
# the four types' (13SIA 85.8, 2PIE 95.1, 2PKE 89.5, rP 87.2); a fold's 4000 dev lines hold 1000 of
# each type, so its accuracy is the mean of the types' too.
PAPER = {
    "sigmorphon2016": {
        "hard": dict(zip(SIGMORPHON_LANGUAGES, (92.21, 96.58, 98.92, 98.12, 95.91, 97.99, 96.25, 93.01, 98.77, 88.32))),
        "soft": dict(zip(SIGMORPHON_LANGUAGES, (92.18, 96.51, 98.88, 98.88, 96.99, 99.37, 97.01, 95.41, 99.3, 88.86))),
        "average": {"hard": 95.61, "soft": 96.34, "MED": 95.56}},
    "celex": {"hard": {}, "average": {"hard": 89.44, "LAT": 88.3, "WFST": 87.65, "MED": 87.62}},
    "wiktionary": {"hard": {"de_noun": 88.87, "de_verb": 97.35, "nl_verb": 97.03},
                   "average": {"hard (its average of these 3 sets)": 94.42}},
}


def files(collection, name, data_root):
    """(train, dev, covered test) paths of a set under ``data_root`` (the inflection folder)."""
    spec = COLLECTIONS[collection]
    return tuple(f"{data_root}/{spec['folder']}/{file}" for file in spec["sets"][name])


def training_flags(collection, seed, model="hard", aligner="levenshtein", recipe=RECIPE):
    """The training flags of one member of ``model`` (a key of MODELS) with the oracle of ``aligner``
    (a key of ALIGNERS) and the training of ``recipe`` (a key of RECIPES; data and working directory
    apart)."""
    return [*TRAINING, *MODELS[model]["flags"], *ALIGNERS[aligner]["flags"],
            f"--embedding_size={COLLECTIONS[collection]['embedding_size']}", f"--seed={seed}",
            *RECIPES[recipe]["flags"]]


def aligner_of(cell):
    """The aligner a recorded cell's hard model was trained with (Levenshtein's before cells named one)."""
    return cell.get("aligner", "levenshtein")


def recipe_of(cell):
    """The training recipe of a recorded cell (the one protocol's before cells named one)."""
    return cell.get("recipe", RECIPE)


def predictions_name(covered):
    """The name of a covered test file's predictions: ``german-task1-test-covered`` ->
    ``german-task1-test-predictions``."""
    return covered.replace("covered", "predictions")
