"""Symbols whose meaning a task and a model share, so that neither imports the other.

The inflection task writes a source as its lemma's characters followed by one bracketed symbol
per feature, and (``--inflection_target=actions``) a target as characters and ``<step>`` actions;
the hard-attention model embeds the features apart and moves its pointer on ``<step>``.
"""

STEP = "<step>"  # the action that moves the pointer; never a character (characters are single code points)


def feature_symbol(tag):
    return f"[{tag}]"


def is_feature_symbol(symbol):
    """Whether a source symbol is a feature (bracketed) rather than a character or a special."""
    return len(symbol) > 2 and symbol[0] == "[" and symbol[-1] == "]"
