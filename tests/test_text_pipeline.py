"""One text pipeline per run (rnnpb_nmt/data/text.py): raw text -> words -> symbols and back, the
same at training, test and translation time; SentencePiece models trained on the training files
and kept with the run."""

import io
import pickle

import pytest

from rnnpb_nmt.config import Config
from rnnpb_nmt.data import parts, text as text_module
from rnnpb_nmt.data.dataset import iter_sentences, read_sentences
from rnnpb_nmt.data.text import SUBWORD_MODELS, TextPipeline, looks_untokenized
from rnnpb_nmt.data.vocabulary import UNK_ID
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.tasks.translation.task import TranslationTask

from helpers import SHARED_DATA, raw_copy, raw_corpus

RAW = ["Tom isn't here.", "Where are you going?", "\"Hello,\" she said.", "It costs 3.50 euros!"]


def test_pretokenized_reads_files_as_they_are_and_moses_tokenizes_only_query_input():
    text = TextPipeline("pretokenized")
    assert text.words("Tom isn &apos;t here .", "en") == ["Tom", "isn", "&apos;t", "here", "."]
    assert text.query_words("Tom isn't here.", "en") == ["Tom", "isn", "&apos;t", "here", "."]
    assert text.restore(["Tom", "isn", "&apos;t", "here", "."], 2, "en") == "Tom isn't here."


def test_moses_tokenizes_files_and_queries_alike_and_restores_the_raw_line():
    text = TextPipeline("moses")
    for line in RAW:
        words = text.words(line, "en")
        assert words == text.query_words(line, "en")
        assert text.restore(text.symbols(words, 1), 1, "en") == line
    assert text.words("Where are you going?", "en")[-1] == "?"


def test_none_splits_at_whitespace_everywhere_and_joins_with_spaces():
    text = TextPipeline("none")
    assert text.words("a  b\tc.", "en") == text.query_words("a  b\tc.", "en") == ["a", "b", "c."]
    assert text.restore(["a", "b", "c."], 2, "en") == "a b c."


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_sentencepiece_pieces_decode_to_exactly_their_words_unseen_characters_included(demo_data, kind):
    text = TextPipeline("none", "sentencepiece")
    train = read_sentences(demo_data / "train.en")
    text.train_subwords(train, read_sentences(demo_data / "train.de"), 150, kind, shared=False)
    pieces = text.symbols(train[0], 1)
    assert len(pieces) >= len(train[0]) and any(p.startswith("\u2581") for p in pieces)
    for words in [*train[:50], ["Zoë", "sees", "ünknown", "字", "&amp;", "."]]:
        assert text.unsubword(text.symbols(words, 1), 1) == words
    assert text.symbols([], 1) == [] and text.unsubword([], 1) == []


def test_sentencepiece_training_is_repeatable_and_the_models_are_kept_with_the_run(demo_data, tmp_path):
    train1, train2 = read_sentences(demo_data / "train.en"), read_sentences(demo_data / "train.de")
    first, second = TextPipeline("none", "sentencepiece"), TextPipeline("none", "sentencepiece")
    first.train_subwords(train1, train2, 120, "unigram", shared=False)
    second.train_subwords(train1, train2, 120, "unigram", shared=False)
    assert first.models == second.models and first.models[0] != first.models[1]
    first.save(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SUBWORD_MODELS)
    config = Config().replace(tokenize="none", subword="sentencepiece")
    loaded = TextPipeline.of(config.data, str(tmp_path))
    assert loaded.symbols(train2[3], 2) == first.symbols(train2[3], 2)


def pieces(model):
    """A SentencePiece model's pieces with their scores and kinds, by id."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    return [(processor.id_to_piece(i), processor.get_score(i), processor.is_unknown(i), processor.is_control(i))
            for i in range(processor.get_piece_size())]


def unbounded_model(sentences, vocab_size, kind):
    """A model trained as before the sample bound (issue 91): every sentence, from lists in memory."""
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter([" ".join(s) for s in sentences]), model_writer=model, vocab_size=vocab_size,
        model_type=kind, character_coverage=1.0, hard_vocab_limit=False, normalization_rule_name="identity",
        bos_id=-1, eos_id=-1, unk_id=0, num_threads=1, minloglevel=2)
    return model.getvalue()


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_a_corpus_within_the_sample_bound_gives_the_model_trained_on_all_of_it(demo_data, kind):
    train = read_sentences(demo_data / "train.de")
    assert len(train) < text_module.SUBWORD_SENTENCES
    text = TextPipeline("none", "sentencepiece")
    text.train_subwords(iter_sentences(demo_data / "train.de"), None, 150, kind, shared=True)  # streamed
    assert pieces(text.models[0]) == pieces(unbounded_model(train, 150, kind))


def test_a_corpus_beyond_the_sample_bound_trains_on_a_repeatable_sample(demo_data, monkeypatch):
    train = read_sentences(demo_data / "train.en")
    monkeypatch.setattr(text_module, "SUBWORD_SENTENCES", 150)
    assert len(train) > 2 * 150
    models = []
    for _ in range(2):
        text = TextPipeline("none", "sentencepiece")
        text.train_subwords(iter(train), None, 120, "unigram", shared=True)
        models.append(pieces(text.models[0]))
    assert models[0] == models[1]  # the sample's seed is fixed
    assert models[0] != pieces(unbounded_model(train, 120, "unigram"))  # a sample, not all of the corpus


def test_a_bad_line_met_while_sentencepiece_reads_is_the_files_one_line_error(tmp_path):
    bad = tmp_path / "train.en"
    bad.write_bytes(b"a b c\nd e\n\xff f\n")
    with pytest.raises(UserError, match=r"train.en:3: not valid UTF-8 \(byte 0\)$"):
        TextPipeline("none", "sentencepiece").train_subwords(iter_sentences(bad), None, 20, "unigram", shared=True)


def test_a_run_whose_subword_model_is_missing_or_damaged_says_so_in_one_line(tmp_path):
    config = Config().replace(tokenize="none", subword="sentencepiece")
    with pytest.raises(UserError, match=r"^--subword=sentencepiece: the run's subword model is missing \(.*subword1.model\)$"):
        TextPipeline.of(config.data, str(tmp_path)).symbols(["a"], 1)
    (tmp_path / "subword1.model").write_bytes(b"\x00garbage\xff")
    with pytest.raises(UserError, match=r"^.*subword1.model: corrupted \(not a SentencePiece model\)$"):
        TextPipeline.of(config.data, str(tmp_path)).symbols(["a"], 1)


def test_the_query_of_a_raw_run_has_no_unknown_word_that_training_did_not_have(demo_data, tmp_path):
    files = raw_corpus(demo_data, tmp_path)
    config = Config().replace(tokenize="moses", lang1="en", lang2="de")
    task = TranslationTask(config, str(tmp_path))
    corpus = task.load_corpus(files, config)
    glued = (tmp_path / "train.en").read_text(encoding="utf-8").splitlines()[:20]  # "dog." would be <unk> without Moses
    assert all(UNK_ID not in corpus.vocab1.encode(symbols) for symbols in task.tokenize(glued, "en"))
    assert any(UNK_ID in corpus.vocab1.encode(TextPipeline("none").words(line, "en")) for line in glued)


def test_untokenized_files_are_recognised_and_tokenized_ones_are_not(demo_data, tmp_path):
    raw_copy(demo_data / "train.en", tmp_path / "raw.en", "en")
    assert looks_untokenized(read_sentences(tmp_path / "raw.en"))
    assert not looks_untokenized(read_sentences(demo_data / "train.en"))


@pytest.mark.shared_data
@pytest.mark.slow
def test_the_thesis_data_do_not_look_untokenized():
    for language in ("en", "de"):
        assert not looks_untokenized(read_sentences(SHARED_DATA / "easy" / "easy20000" / f"train.{language}"))


def test_a_raw_corpus_is_read_through_moses_and_sentencepiece_and_scored_on_raw_text(demo_data, tmp_path):
    files = raw_corpus(demo_data, tmp_path)
    config = Config().replace(tokenize="moses", subword="sentencepiece", subword_vocab=100, lang1="en", lang2="de")
    task = TranslationTask(config, str(tmp_path))
    corpus = task.load_corpus(files, config)
    assert any(w.startswith("\u2581") for w in corpus.vocab1.itos) and "." in "".join(corpus.vocab2.itos)
    sources, references, path = task.read_test(files["test_set1"], None, "de")
    assert path == files["test_set2"] and len(sources) == len(references)
    raw_references = (tmp_path / "test.de").read_text(encoding="utf-8").splitlines()
    assert task.output_lines(sources, references) == raw_references
    perfect = task.score(sources, references, references, "de")
    assert perfect["bleu"] == pytest.approx(100) and perfect["bleu_detokenized"] == pytest.approx(100)
    assert "tok:13a" in perfect["sacrebleu_signature"]
    assert task.tokenize(["Der Mann sieht den Hund."], "en")[0] == task.text.symbols(
        task.text.words("Der Mann sieht den Hund.", "en"), 1)


def test_fewer_sentencepiece_pieces_than_asked_are_noted_in_one_line(demo_data, tmp_path, capsys):
    files = raw_corpus(demo_data, tmp_path)
    config = Config().replace(tokenize="moses", subword="sentencepiece", subword_vocab=5000, lang1="en", lang2="de")
    task = TranslationTask(config, str(tmp_path))
    task.load_corpus(files, config)
    counts = task.text.piece_counts()
    assert set(counts) == {1, 2} and max(counts.values()) < 5000
    assert capsys.readouterr().err.splitlines() == [
        f"note: --subword_vocab=5000: the training text gives fewer SentencePiece pieces: {counts[1]} for en, "
        f"{counts[2]} for de"]
    enough = config.replace(subword_vocab=min(counts.values()))
    TranslationTask(enough, str(tmp_path)).load_corpus(files, enough)
    assert "subword_vocab" not in capsys.readouterr().err


def test_a_pretokenized_run_given_raw_files_warns_once(demo_data, tmp_path, capsys):
    files = raw_corpus(demo_data, tmp_path)
    config = Config().replace(lang1="en", lang2="de")
    TranslationTask(config).load_corpus(files, config)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "looks untokenized" in line]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {files['train_set1']} looks untokenized")
    TranslationTask(config).load_corpus({k: str(demo_data / v.rsplit("/", 1)[1]) for k, v in files.items()}, config)
    assert "looks untokenized" not in capsys.readouterr().err


def test_a_raw_corpus_read_in_parts_by_pickled_readers_is_the_one_read_whole(demo_data, tmp_path, monkeypatch):
    """Moses and SentencePiece in the readers that worker processes are given (pickled, as a spawned
    worker gets them: their tools made again there): files read in parts of a line or two give the
    vocabularies and ids of the files read in one piece."""
    files = raw_corpus(demo_data, tmp_path)
    config = Config().replace(tokenize="moses", subword="sentencepiece", subword_vocab=100, lang1="en", lang2="de",
                              prepare_workers=1)
    whole = TranslationTask(config, None).load_corpus(files, config)
    monkeypatch.setattr(parts, "MAX_PART_BYTES", 97)
    drafted = parts._draft_part  # each part's reader pickled and read back first, as in a worker
    monkeypatch.setattr(parts, "_draft_part", lambda job: drafted((pickle.loads(pickle.dumps(job[0])), *job[1:])))
    in_parts = TranslationTask(config, None).load_corpus(files, config)
    assert in_parts.vocab1.itos == whole.vocab1.itos and in_parts.vocab2.itos == whole.vocab2.itos
    for name in ("train_src", "train_tgt", "dev_src", "dev_tgt"):
        assert [s.tolist() for s in getattr(in_parts, name)] == [s.tolist() for s in getattr(whole, name)]
