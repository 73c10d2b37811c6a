"""The inflection task's options (``--task=inflection``)."""

import dataclasses

from rnnpb_nmt.options import option


@dataclasses.dataclass(frozen=True)
class DataOptions:
    inflection_target: str = option(
        "actions", "--task=inflection: what a model learns to write: actions (the form's characters and <step> "
        "actions, for --model=hard_attention) or form (the form's characters only: a soft-attention model)",
        choices=("actions", "form"), legacy="actions", only=("task", ("inflection",)))
    aligner: str = option(
        "levenshtein", "--inflection_target=actions: the character alignment of lemma and form the step/write "
        "actions are read off: levenshtein (each pair alone, minimum edit distance), corpus (a Gibbs sampler "
        "over all training pairs, after the SIGMORPHON 2016 baseline's aligner the paper used: the columns the "
        "corpus shares win ties; fit when the data load, deterministic) or corpus_early (the same costs, ties "
        "among equally cheap alignments broken as that aligner does: insertions as early as possible)",
        choices=("levenshtein", "corpus", "corpus_early"), legacy="levenshtein",
        only=("inflection_target", ("actions",)))
    end_of_word: bool = option(
        False, "--inflection_target=actions: the lemma ends in an end-of-word position the oracle steps onto "
        "after its last column, before <end> (the authors' code encodes <lemma>; the paper does not say), so "
        "that --model=hard_attention reads a state for 'the input is consumed'", legacy=False,
        only=("inflection_target", ("actions",)))
