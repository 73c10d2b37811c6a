"""Tasks: what the data of a run is, how it is read and tokenised, and how outputs are scored.

A model knows nothing of files or metrics: it maps id sequences to id sequences. A task turns a
run's files into those sequences (``load_corpus``, ``read_test``), raw text into tokens and back
(``tokenize``/``detokenize`` for ``--query``), and outputs into scores (``score``). The whole
contract, each method with what it must do, is ``base.Task``; every task subclasses it. A run's
task is ``config.data.task``: each ``<task>/task.py`` registers its class under that name with
``rnnpb_nmt.registry.register_task``, as a model family registers its ``--model`` names.
"""
