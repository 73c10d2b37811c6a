#!/usr/bin/env python3
"""Command-line entry: ``python3 nmt.py --do_training|--do_testing|--query ... --working_dir=DIR``."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TensorFlow's start-up chatter is not for users

from nmtcore.cli import main  # noqa: E402


def models():
    """--model names -> classes; the core knows no model, new models register here."""
    from hardattention import HardAttentionTransducer
    from memorylstm import DeepLSTMTransducer, MemoryLSTMTransducer
    from rnnpb import BoundRNNPB
    from seq2seq import EncoderDecoder
    return {"encdec": EncoderDecoder, "rnnpbnmt": BoundRNNPB, "deep_lstm": DeepLSTMTransducer,
            "hard_attention": HardAttentionTransducer,
            **{f"{kind}_lstm": MemoryLSTMTransducer for kind in ("stack", "queue", "deque")}}


def tasks():
    """Task names -> classes (``nmtcore.tasks``); new tasks register here."""
    from nmtcore.tasks.inflection import InflectionTask
    from nmtcore.tasks.question_formation import QuestionFormationTask
    from nmtcore.tasks.transduction import TransductionTask
    from nmtcore.tasks.translation import TranslationTask
    return {"translation": TranslationTask, "transduction": TransductionTask, "inflection": InflectionTask,
            "question_formation": QuestionFormationTask}


if __name__ == "__main__":
    sys.exit(main(models(), tasks()))
