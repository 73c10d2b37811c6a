"""Ensembles at test time: the majority vote of several trained models (``--ensemble``).

Each member translates every input on its own (its own vocabularies, search and settings); for
each input the output most members wrote wins, as the ensembles of Aharoni & Goldberg 2017 voted
over whole predicted forms. Outputs count as the same vote when the task would write the same
line for them (``task.output_lines``): an inflection is its form, whichever ``<step>`` actions
led to it; a translation its tokens. So members need not share vocabularies, only the task.

Ties: among the outputs with the most votes, the one the earliest-listed member wrote wins; in
particular, the first member's output whenever it is among them. One member is that member.

Pure Python, no TensorFlow: a member is anything with ``translate``, like ``rnnpb_nmt.infer.translator``'s.
"""

import collections


def vote(candidates):
    """Index of the winning candidate of one input (one per member): the first of those that are
    equal to the most others."""
    counts = collections.Counter(candidates)
    most = max(counts.values())
    return next(i for i, candidate in enumerate(candidates) if counts[candidate] == most)


def majority_vote(predictions, keys=None):
    """The winning prediction of every input.

    ``predictions`` has one list per member, each with one prediction per input, in member order
    (the order that breaks ties); ``keys``, of the same shape, says which predictions are the same
    vote (default: the predictions themselves, which must then be hashable).
    """
    keys = predictions if keys is None else keys
    if not predictions or len({len(p) for p in [*predictions, *keys]}) != 1 or len(keys) != len(predictions):
        raise ValueError("majority_vote needs at least one member, and as many predictions of each as inputs")
    return [predictions[vote(column)][i] for i, column in enumerate(zip(*keys))]


class VotingTranslator:
    """Translates like a ``Translator``, by the majority vote of ``translators`` (in tie order).

    ``model`` is the first member's: its configuration stands for the ensemble's where one is
    needed (languages, beam size in testing_stats.json).
    """

    def __init__(self, translators, task):
        self.translators, self.task = list(translators), task
        self.model = self.translators[0].model

    def reversed(self):
        """The vote of the members translating B->A (``Translator.reversed``)."""
        return VotingTranslator([t.reversed() for t in self.translators], self.task)

    def translate(self, sentences, beam_size=None, batch_size=None, show_progress=False):
        outputs = [t.translate(sentences, beam_size, batch_size, show_progress) for t in self.translators]
        return majority_vote(outputs, [self.task.output_lines(sentences, o) for o in outputs])
