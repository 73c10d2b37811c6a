"""One training process per working directory: an exclusive OS lock that dies with its process.

The lock is ``flock`` on ``<working_dir>/.lock``. The kernel releases it when the process ends in
any way (a SIGKILL and a reboot included), so there is never a stale lock to remove by hand; the
file only holds the holder's PID, for the message that refuses a second process. It lives inside
the directory, not beside it: the user may own the directory but not its parent (``/scratch/me``),
and on a shared file system every worker's directory (``<working_dir>.worker-N``) is its own. A
directory renamed away by ``--start_over`` takes its lock file along, still held; the process then
locks the new, empty directory as well. Locking makes a directory that does not exist yet, and
removes it again when what runs under the lock fails while it holds nothing but the lock file: a
start that fails (a missing training file, a flag the model refuses) leaves no empty working
directory behind. A directory that existed before is never removed.
"""

import contextlib
import fcntl
import os

from rnnpb_nmt.errors import UserError

LOCK = ".lock"


@contextlib.contextmanager
def exclusive(working_dir):
    """Hold ``working_dir``'s lock inside the ``with`` (making the directory if need be); a
    UserError naming the holder if another process holds it. Creating the lock file is also the
    test that the directory can be written, before any work goes into it. A failure inside the
    ``with`` removes the directories this made (``_unmake``)."""
    fd, made = _acquire(working_dir)
    try:
        yield
    except BaseException:
        _unmake(working_dir, made)
        raise
    finally:
        os.close(fd)


def _acquire(working_dir):
    """Lock ``working_dir``; returns the lock file's descriptor, whose closing releases it, and the
    directories made for it."""
    try:
        made = _make(working_dir)
        fd = os.open(os.path.join(working_dir, LOCK), os.O_RDWR | os.O_CREAT, 0o644)  # RDWR: NFS's flock is fcntl's
    except OSError as e:
        raise _unwritable(working_dir, e) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        raise UserError(f"--working_dir={working_dir} is being trained by another process (PID {holder}); "
                        "wait for it to end, or stop it and run the same command again to resume") from None
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as e:
        os.close(fd)
        raise _unwritable(working_dir, e) from None
    return fd, made


def _make(working_dir):
    """Make ``working_dir`` and its missing parents; returns those this call made, innermost first.
    One ``mkdir`` per directory, not ``makedirs``: a directory another process makes at the same
    moment is then not counted as made here (its ``mkdir`` fails), so it is never removed as ours."""
    missing, path = [], os.path.abspath(working_dir)
    while not os.path.isdir(path):
        missing.insert(0, path)
        path = os.path.dirname(path)
    made = []
    for path in missing:
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        made.insert(0, path)
    return made


def _unmake(working_dir, made):
    """Remove the directories ``made`` for the lock (``working_dir`` and missing parents, innermost
    first) while they hold nothing but it. Quietly partial: another process may put a file there
    meanwhile, and the error that got here is the one to report."""
    with contextlib.suppress(OSError):
        if made and os.listdir(working_dir) == [LOCK]:
            os.remove(os.path.join(working_dir, LOCK))
            for path in made:
                os.rmdir(path)


def _unwritable(working_dir, error):
    return UserError(f"--working_dir={working_dir}: cannot write there ({error.strerror})")
