"""The one exception type that reaches the user as a one-line message instead of a traceback."""


class UserError(Exception):
    """Bad input (a file, a line, a flag, a working directory) that the user can fix.

    The command-line entry prints ``error: <message>`` and exits with status 1, so every message
    must name what is wrong and where (file and line, or flag).
    """
