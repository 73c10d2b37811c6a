"""Tasks: what the data of a run is, how it is read and tokenised, and how outputs are scored.

A model knows nothing of files or metrics: it maps id sequences to id sequences. A task turns a
run's files into those sequences (``load_corpus``, ``read_test``), raw text into tokens and back
(``tokenize``/``detokenize`` for ``--query``), and outputs into scores (``score``). A run's task
is ``config.data.task``; ``nmt.py`` maps task names to classes, as it does models.
"""
