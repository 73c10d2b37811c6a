"""Writing the files a run leaves behind: a reader never sees a half-written one, and a write that
fails (a full disk, a read-only file system, a directory in the way) is a one-line UserError
naming the file, with the previous version still in place. Reading one back: a file that is not
what was written (edited by hand, cut short) is a one-line UserError too."""

import contextlib
import json
import os
import tempfile
import uuid

from rnnpb_nmt.errors import UserError


def read_json_object(path):
    """The JSON object (a dict) in ``path``; anything else there is a one-line 'corrupted' error."""
    try:
        with open(path, encoding="utf-8") as f:
            read = json.load(f)
    except ValueError as e:  # also undecodable bytes
        raise UserError(f"{path}: corrupted ({e})") from None
    if not isinstance(read, dict):
        raise UserError(f"{path}: corrupted (not a JSON object)")
    return read


def write_json(path, obj):
    """Write JSON atomically (see ``write_text``)."""
    write_text(path, json.dumps(obj, indent=2) + "\n")


def write_text(path, text):
    """Write a UTF-8 file atomically (``atomic_file``)."""
    with atomic_file(path) as f:
        f.write(text)


@contextlib.contextmanager
def atomic_file(path, binary=False):
    """A UTF-8 text file (a binary one if ``binary``) to write ``path`` through: a reader never sees
    a half-written file, even after a kill, and a failure inside (an exception or a failed write)
    leaves the previous file as it was and no temporary file. The temporary file is a new one beside
    ``path``'s target (a symbolic link is written through, not replaced), never a file that was
    there; missing parent directories are made. An OSError becomes ``cannot_write(path, ...)``."""
    target = os.path.realpath(path)
    tmp = None
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = f"{target}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        # "x": made here (with the umask's permissions)
        with (open(tmp, "xb") if binary else open(tmp, "x", encoding="utf-8")) as f:
            yield f
        os.replace(tmp, target)
        tmp = None
    except OSError as e:
        raise cannot_write(path, e) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.remove(tmp)


@contextlib.contextmanager
def writing(path, errors=(OSError,)):
    """Inside, ``errors`` (say TensorFlow's, for a checkpoint) become ``cannot_write(path, ...)``."""
    try:
        yield
    except errors as e:
        raise cannot_write(path, e) from None


def cannot_write(path, error):
    """The UserError for a failed write of ``path``: an OSError's reason (``No space left on
    device``), or the first line's last clause of a TensorFlow error (``...; No space left on
    device [Op:SaveV2]``)."""
    reason = error.strerror if isinstance(error, OSError) and error.strerror else \
        str(error).split("\n")[0].split("; ")[-1].split(" [Op:")[0]
    return UserError(f"{path}: cannot write ({reason})")


def check_writable(path):
    """Refuse, before any work goes into it, a file that could not be written later: a directory
    in its place, a read-only file, or a directory (or, for one not made yet, the nearest existing
    parent) in which no file can be created. Creating a file there is the only sure test: as root
    ``os.access`` says yes to every file a permission bit forbids, though not on a read-only mount."""
    if os.path.isdir(path):
        raise UserError(f"{path}: cannot write (a directory is in the way)")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise UserError(f"{path}: cannot write (not writable)")
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise UserError(f"{path}: cannot write ({parent} is a file)")
    try:
        tempfile.TemporaryFile(dir=parent).close()
    except OSError as e:
        raise cannot_write(path, e) from None
