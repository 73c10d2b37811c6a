"""The sequence-to-sequence baseline (Sutskever et al. 2014): ``--model=encdec``."""

from seq2seq.model import EncoderDecoder

__all__ = ["EncoderDecoder"]
