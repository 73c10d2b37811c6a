"""Property-based tests: random bytes and lines thrown at the file reader, the vocabulary and --query.

Whatever the input, the reader returns sentences or raises a UserError naming the file and line,
the vocabulary survives a save and load, and --query answers every input line with one line.

``make test`` runs them derandomized (the "ci" profile in conftest.py), so CI sees the same examples
every time; ``make fuzz`` draws new ones.
"""

import io
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from rnnpb_nmt.data.dataset import read_sentences
from rnnpb_nmt.data.vocabulary import UNK_ID, Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer.prediction import translate_lines
from rnnpb_nmt.infer.streaming import batches, read_lines_as_they_come

from rnnpb_nmt.tasks.translation.task import TranslationTask

from helpers import ROOT, translator_of, untrained_working_dir

# Words the demo corpus knows, words it does not, escapes, lookalike whitespace, long words.
PIECES = ["the", "dog", "sees", ".", "Hund", "Zoë", "ünknown", "&", "<unk>", "<pad>", "'s", "x" * 300,
          " ", "\t", "\xa0", "\u2028", "\x85", "\x0b", "\ufeff", "\x00", "日本語", "🙂"]
LINE = st.lists(st.sampled_from(PIECES) | st.text(max_size=8), max_size=12).map(" ".join).map(
    lambda s: s.replace("\n", " ").replace("\r", " "))
BAD_BYTES = st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x80abc"])
FILE_LINE = LINE.map(str.encode) | st.tuples(LINE.map(str.encode), BAD_BYTES).map(b"".join)
BOM = "\ufeff".encode()
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def text_files(draw):
    """(file bytes, its lines as bytes): LF or CRLF per line, an optional BOM and final newline."""
    lines = draw(st.lists(FILE_LINE, max_size=8))
    ends = draw(st.lists(st.sampled_from([b"\n", b"\r\n"]), min_size=len(lines), max_size=len(lines)))
    data = b"".join(line + end for line, end in zip(lines, ends))
    if lines and lines[-1] and draw(st.booleans()):
        data = data[: -len(ends[-1])]  # no newline after the last line
    if draw(st.booleans()):
        return BOM + data, lines
    return data, without_leading_bom(lines)


def without_leading_bom(lines):
    """What a reader sees of ``lines`` written without a BOM: a first line that starts with one
    cannot be told from a BOM'd file, and loses it."""
    if lines and lines[0].startswith(BOM):
        return [lines[0][len(BOM):]] + lines[1:]
    return lines


def first_problem(lines):
    """What read_sentences must report first about these lines, or None."""
    if not lines:
        return "file is empty"
    for number, line in enumerate(lines, start=1):
        try:
            if not line.decode("utf-8").split():
                return f"{number}: empty line"
        except UnicodeDecodeError:
            return f"{number}: not valid UTF-8"
    return None


@SETTINGS
@given(text_files())
@example((b"\n\xff\n", [b"", b"\xff"]))  # the first problem is named, not the first undecodable line
def test_reader_returns_the_lines_or_names_file_and_line(tmp_path, file):
    data, lines = file
    path = tmp_path / "corpus.en"
    path.write_bytes(data)
    problem = first_problem(lines)
    if problem is None:
        assert read_sentences(path) == [line.decode("utf-8").split() for line in lines]
    else:
        with pytest.raises(UserError) as error:
            read_sentences(path)
        message = str(error.value)
        assert message.startswith(f"{path}:") and problem in message and "\n" not in message


@SETTINGS
@given(st.binary(max_size=300))
def test_reader_survives_any_bytes(tmp_path, data):
    path = tmp_path / "random.de"
    path.write_bytes(data)
    try:
        sentences = read_sentences(path)
    except UserError as e:
        assert str(e).startswith(f"{path}:") and "\n" not in str(e)
    else:
        assert sentences and all(s and all(w and not any(c.isspace() for c in w) for w in s) for s in sentences)


@SETTINGS
@given(st.lists(LINE.map(str.split), max_size=10), LINE, st.none() | st.integers(1, 20))
def test_vocabulary_round_trips_and_maps_unknown_words_to_unk(tmp_path, sentences, words, max_size):
    vocab = Vocabulary.build(sentences, max_size)
    vocab.save(tmp_path / "vocab.txt")
    loaded = Vocabulary.load(tmp_path / "vocab.txt")
    assert loaded.itos == vocab.itos
    for word in words.split():
        assert (loaded.encode([word]) == [UNK_ID]) == (word not in vocab.stoi or word == "<unk>")
    known = [w for s in sentences for w in s if w in vocab.stoi and vocab.stoi[w] > UNK_ID]
    assert loaded.decode(loaded.encode(known)) == known


@pytest.fixture(scope="module")
def query_translator(demo_data, tmp_path_factory):
    """An untrained seq-to-seq model: --query's line handling does not depend on the weights."""
    return translator_of(untrained_working_dir(tmp_path_factory.mktemp("query"), demo_data, model="encdec",
                                               beam_size=2, max_trans_ratio=0.5))


@settings(max_examples=settings.default.max_examples // 2, deadline=None)  # each example translates
# A NUL byte is binary data, which ends the stream (test_translate_mode.py): text lines have none.
@given(st.lists(st.tuples(FILE_LINE.map(lambda line: line.replace(b"\0", b" ")), st.sampled_from([b"\n", b"\r\n"])),
                max_size=20), st.booleans())
def test_query_answers_each_stdin_line_with_one_line(query_translator, lines, bom):
    data = (BOM if bom else b"") + b"".join(line + end for line, end in lines)
    read = [line for batch in batches(read_lines_as_they_come(io.BytesIO(data)), 1000) for line in batch]
    expected = [line for line, _ in lines] if bom else without_leading_bom([line for line, _ in lines])
    assert read == [line.decode("utf-8", errors="replace") for line in expected]  # BOM and CR gone
    outputs = translate_lines(query_translator, TranslationTask(), read)
    assert len(outputs) == len(lines)
    assert not any("\n" in out or "\r" in out for out in outputs)
    for (line, _), out in zip(lines, outputs):
        if not line.strip():
            assert out == ""


NASTY_STDIN = (b"\xef\xbb\xbfthe dog sees a cat .\r\n\r\n \t \nqwertz zxcv &amp; <unk>\n\xff\xfe broken \xc3\n"
               + b"the dog " * 500 + b"\nno final newline")


@pytest.mark.long
def test_query_from_stdin_survives_nasty_input(demo_data, tmp_path):
    untrained_working_dir(tmp_path, demo_data, model="rnnpbnmt", beam_size=2)
    proc = subprocess.run([sys.executable, str(ROOT / "nmt.py"), "--query=-", f"--working_dir={tmp_path}"],
                          input=NASTY_STDIN, capture_output=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    lines = proc.stdout.decode("utf-8").split("\n")
    assert len(lines) == 8 and lines[-1] == ""  # seven input lines, seven output lines
    assert lines[1] == lines[2] == ""
