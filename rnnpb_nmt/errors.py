"""The one exception type that reaches the user as a one-line message instead of a traceback."""

import sys


class UserError(Exception):
    """Bad input (a file, a line, a flag, a working directory) that the user can fix.

    The command-line entry prints ``error: <message>`` and exits with status 1, so every message
    must name what is wrong and where (file and line, or flag).
    """


def exit_status(action):
    """Run ``action()``: exit status 0, or 1 after its UserError as one line on stderr (a command's
    ``main`` that has no other failure to tell)."""
    try:
        action()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0
