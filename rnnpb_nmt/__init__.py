"""A TensorFlow 2 toolkit for neural sequence transduction around the bound RNNPB model.

The package map (README.md, "Where things are"): ``cli``, ``config`` and ``registry`` at the top;
``data/`` reads files into batches; ``layers/`` holds the recurrent, attention and memory layers;
``models/<family>/`` the models, each registering its ``--model`` names; ``tasks/<task>/`` what a
run's data is and how it is scored; ``train/`` the training loop and a working directory's files;
``infer/`` search, translation, testing and analysis; ``api`` a trained model from Python (``load``).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TensorFlow's start-up chatter is not for users

# First, before any module uses TensorFlow: the stack's Keras, and a quiet TensorFlow import.
from rnnpb_nmt import tf_stack  # noqa: F401


def load(working_dir, **settings):
    """The trained model of ``working_dir``, ready to translate raw text (``rnnpb_nmt.api``)."""
    from rnnpb_nmt import api  # here: importing every model and task is for those who use one

    return api.load(working_dir, **settings)
