"""Translate mode (``--translate``) and ``--query=-``: raw lines in, raw translations out, as a stream.

Each input line is answered as soon as it is translated, and the answer flushed, so that another
program can talk to the translator over a pipe one line at a time; lines that are already waiting
(a file, a fast writer) are translated together, a window of up to ``WINDOW_BATCHES`` times
``--test_batch_size`` at once, which the translator sorts by length into batches (as ``--do_testing``
sorts the whole test set) and answers in input order: so a file goes about as fast as
``--do_testing`` would take it, and memory holds two windows' lines (one translated, the next read
ahead), whatever the input's length.

Output: one line per input line (the translation), or with ``--nbest N``/``--scores`` Moses-style
n-best lines, ``N`` per input line, best first::

    LINE ||| translation ||| score[ ||| score of each output symbol and of the end]

LINE counts input lines from 0, the score is the model's summed log-probability of the output
(the beam's rank may differ: ``--length_penalty``, ``--joint_rerank``). An empty input line gets an
empty translation (score 0).
"""

import functools
import io
import os
import queue
import stat
import sys
import threading

from rnnpb_nmt.data.files import atomic_file, check_writable
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer.prediction import translate_nbest_lines

_EOF = object()
# Lines translated together, in --test_batch_size batches: enough of them that sorting by length
# leaves little padding (2000 test sentences with the default 256 are one window).
WINDOW_BATCHES = 8


def read_lines_as_they_come(stream, name="stdin", ahead=0):
    """The lines of a binary stream as text, each as soon as it has arrived (a background thread
    reads ahead, at most ``ahead`` lines when it is not 0, so that memory does not grow with the
    stream): LF or CRLF, a leading BOM dropped, undecodable bytes as U+FFFD (so that they do
    not cost the other lines their translations). A NUL byte, which no text has, ends the stream
    with a UserError naming ``name`` and the line: binary data. Returns a queue; see ``batches``."""
    lines = queue.Queue(maxsize=ahead)

    def read():
        try:
            for number, raw in enumerate(iter(stream.readline, b"")):
                if b"\0" in raw:
                    lines.put(UserError(f"{name}:{number + 1}: binary data (a NUL byte), not text"))
                    return
                text = raw.decode("utf-8-sig" if number == 0 else "utf-8", errors="replace")
                if text or raw.endswith(b"\n"):  # a stream of a BOM alone has no lines
                    lines.put(text.rstrip("\n").rstrip("\r"))
        finally:
            lines.put(_EOF)

    threading.Thread(target=read, daemon=True).start()
    return lines


def batches(lines, max_size, fill=False):
    """Lists of the lines of queue ``lines`` (ending in ``_EOF`` or a UserError, raised after the
    lines before it): each batch waits for one line, then takes those already waiting, up to
    ``max_size``; with ``fill`` (a file, whose lines are all there to read), it waits for
    ``max_size`` lines or the end, so that the reading thread's pace does not cut a window short."""
    end = None
    while end is None:
        batch = [lines.get()]
        while batch[-1] is not _EOF and not isinstance(batch[-1], UserError) and len(batch) < max_size:
            try:
                batch.append(lines.get() if fill else lines.get_nowait())
            except queue.Empty:
                break
        if batch[-1] is _EOF or isinstance(batch[-1], UserError):
            end = batch.pop()
        if batch:
            yield batch
    if end is not _EOF:
        raise end


def format_hypotheses(number, hypotheses, nbest_format, token_scores):
    """The output lines of input line ``number`` (0-based): its best translation's text, or its
    n-best lines."""
    if not nbest_format:
        return [hypotheses[0].text]
    return [f"{number} ||| {h.text} ||| {h.score:.4f}"
            + (f" ||| {' '.join(f'{s:.4f}' for s in h.token_scores)}" if token_scores else "")
            for h in hypotheses]


def translate_stream(translator, task, source, out, nbest=1, scores=False, token_scores=False, name="stdin"):
    """Translate binary stream ``source`` (called ``name`` in errors) line by line into text stream
    ``out`` (module docstring)."""
    nbest_format = nbest > 1 or scores or token_scores
    number = 0
    window = WINDOW_BATCHES * translator.config.test_batch_size
    for lines in batches(read_lines_as_they_come(source, name, ahead=window), window, fill=_is_file(source)):
        place = functools.partial(_line_name, name, number)  # for warnings about the window's lines
        for hypotheses in translate_nbest_lines(translator, task, lines, nbest, place):
            for line in format_hypotheses(number, hypotheses, nbest_format, token_scores):
                out.write(line + "\n")
            number += 1
        out.flush()


def _is_file(stream):
    """Whether ``stream`` reads a regular file (a named input, or stdin redirected from one), not a
    pipe, terminal or socket whose lines come when their writer sends them."""
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (AttributeError, OSError, io.UnsupportedOperation):  # e.g. an in-memory stream
        return False


def _line_name(name, first, index):
    """``name:line`` of the line ``index`` lines after line ``first`` (both from 0) of input ``name``."""
    return f"{name}:{first + index + 1}"


def translate_file(translator, task, input_path, output_path, **options):
    """``--translate``: ``input_path`` ('-': stdin) into ``output_path`` ('-': stdout). A file is
    written through a new temporary file beside it, renamed when complete (``atomic_file``), so that
    a failed or interrupted run leaves a previous output as it was."""
    if input_path != "-" and not os.path.isfile(input_path):
        raise UserError(f"--input={input_path}: no such file")
    if output_path != "-" and input_path != "-" and os.path.realpath(output_path) == os.path.realpath(input_path):
        raise UserError(f"--output={output_path}: the same file as --input (it would be overwritten)")
    source = sys.stdin.buffer if input_path == "-" else open(input_path, "rb")
    try:
        if output_path == "-":
            translate_stream(translator, task, source, sys.stdout, name="stdin" if input_path == "-" else input_path,
                             **options)
            return
        check_writable(output_path)
        with atomic_file(output_path) as out:
            translate_stream(translator, task, source, out, name=input_path, **options)
    finally:
        if source is not sys.stdin.buffer:
            source.close()
