"""Using a trained model from Python:

    from rnnpb_nmt import load
    model = load("runs/en-de")                                     # once: weights, vocabularies, subwords
    model.translate(["How are you?"])                              # ['Wie geht es dir?']
    model.translate(["How are you?"], nbest=3)                     # [[Translation(text, score, token_scores), ...]]
    model.translate(["How are you?"], scores=True)                 # [[Translation(...)]]: the best, with its scores

Input is raw text, prepared as the run prepared its training data (``--tokenize``, ``--subword``);
output is raw text. Calls are batched (``--test_batch_size`` sentences at once, on every core).
"""

import functools

from rnnpb_nmt import registry
from rnnpb_nmt.config import check_ranges
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.flags import INFERENCE
from rnnpb_nmt.infer import parallel
from rnnpb_nmt.infer.prediction import translate_nbest_lines
from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.train.workdir import WorkingDir


class TrainedModel:
    """A trained model of a working directory, its task and its translation settings."""

    def __init__(self, working_dir, **settings):
        models = registry.models()
        unknown = sorted(set(settings) - set(INFERENCE))
        if unknown:
            raise UserError(f"load: unknown setting(s) {', '.join(unknown)} (translation settings: "
                            f"{', '.join(sorted(INFERENCE))})")
        check_ranges(settings)
        model = WorkingDir(working_dir).load_model(models, settings)
        self.working_dir, self.config = working_dir, model.config
        self.translator = Translator(model)
        self.task = registry.tasks()[model.config.data.task](model.config, working_dir)

    @functools.cached_property
    def backward(self):
        """The translator of B->A, made at the first use (a UserError for a model that translates one way
        only) and kept, with its compiled searches."""
        return self.translator.reversed()

    def translate(self, lines, nbest=1, scores=False, reverse=False):
        """Raw sentences -> their translations: one string each; with ``nbest`` > 1 or ``scores``,
        for each its ``nbest`` best ``Translation``s (text, score, token_scores), best first.
        ``reverse``: B -> A, for a model that translates both ways."""
        if isinstance(lines, str):
            raise UserError("translate: give a list of sentences, not one string")
        found = translate_nbest_lines(self.backward if reverse else self.translator, self.task, list(lines), nbest)
        return found if nbest > 1 or scores else [hypotheses[0].text for hypotheses in found]

def load(working_dir, **settings):
    """The trained model of ``working_dir``, with translation settings (``beam_size=5``,
    ``length_penalty=0.6``, ...: the inference flags of ``docs/flags.md``) replacing the saved ones."""
    parallel.use_cores_for_batches()
    return TrainedModel(working_dir, **settings)
