"""The translation task's options: it is the toolkit's default task (the thesis's), and has no
fields of its own."""

DEFAULT_TASK = "translation"
