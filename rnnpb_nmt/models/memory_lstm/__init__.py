"""Read-then-generate transducers of Grefenstette et al. 2015 §4: ``--model=stack_lstm``,
``queue_lstm``, ``deque_lstm`` (an LSTM controlling a neural memory) and ``deep_lstm`` (the
paper's Deep LSTM benchmark)."""
