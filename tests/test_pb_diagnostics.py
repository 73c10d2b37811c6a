"""--analyze's diagnostics of issue 16 for the bound model (rnnpb_nmt/models/rnnpb/analysis.py): the ceiling, stored
vs recognised PBs of training pairs, PB norms and binding ratio."""

import numpy as np
import pytest

from rnnpb_nmt.data.dataset import encode_all, make_dataset
from rnnpb_nmt.metrics import bitext_retrieval, bleu
from rnnpb_nmt.models.rnnpb import analysis, joint

from helpers import VOCAB, first_batch, reversal_corpus, translator_of


def tokens(id_arrays):
    return [VOCAB.decode(ids) for ids in id_arrays]


@pytest.fixture(scope="module")
def translator(trained):
    """The trained model's translator, shared by the module's tests: its search is traced once."""
    return translator_of(trained[0])


def translation_bleu(translator, pairs):
    hypotheses = translator.translate([s for s, _ in pairs])
    return bleu([" ".join(h) for h in hypotheses], [" ".join(t) for _, t in pairs])


def test_the_ceiling_rows_decode_the_pbs_of_the_pair_together_and_of_the_source_alone(
        trained, translator, monkeypatch):  # noqa: F811
    """Each row by the PBs it decodes from, recognised again here: this tiny model's translations
    are too poor for BLEU to tell PBs apart (empty, when this test was written: both rows 0)."""
    model, _ = trained
    src, tgt = reversal_corpus(12, seed=1)
    pairs = list(zip(tokens(src), tokens(tgt)))
    decoded, decode_bleu = [], analysis.decode_bleu

    def recorded(model, pbs, pairs):
        decoded.append((pbs, decode_bleu(model, pbs, pairs)))
        return decoded[-1][1]

    monkeypatch.setattr(analysis, "decode_bleu", recorded)
    scores = analysis.ceiling(model, pairs)
    assert scores["ceiling_sentences"] == 12
    batch = first_batch(src, tgt)
    expected = {"ceiling_bleu_pair_pb": joint.joint_objective(model, batch["src"], batch["tgt"], 1.0)[1],  # min_p L_A + L_B
                "ceiling_bleu_source_pb": model.recognize(batch["src"])["pb"]}
    for row, pbs in expected.items():
        from_these = [value for found, value in decoded if np.allclose(found, pbs, atol=1e-4)]
        assert len(from_these) == 1 and scores[row] == from_these[0], row
    assert scores["ceiling_bleu_source_pb"] == pytest.approx(translation_bleu(translator, pairs), abs=1e-6)


def test_stored_pbs_decode_training_pairs_and_recognised_ones_are_measured_against_them(trained, translator):  # noqa: F811
    model, _ = trained
    if model.pbs is None:
        pytest.skip("--amortize has no stored PBs")
    src, tgt = reversal_corpus(64)  # the fixture's training pairs, in its table's order
    pairs = list(zip(tokens(src), tokens(tgt)))[:16]
    scores = analysis.stored_vs_recognised(model, pairs)
    assert scores["stored_sentences"] == 16
    assert scores["stored_bleu_recognised_pb"] == pytest.approx(translation_bleu(translator, pairs), abs=1e-6)
    stored = model.trained_pbs(range(16), side="b")
    assert scores["stored_pb_b_mean_norm"] == pytest.approx(np.linalg.norm(stored, axis=1).mean(), rel=1e-5)
    assert scores["recognised_vs_stored_b_binding_ratio"] == pytest.approx(
        scores["recognised_vs_stored_b_mean_distance"] / scores["recognised_vs_stored_b_random_distance"])


def test_analyze_reports_the_ceiling_in_both_modes_and_stored_pbs_where_there_are_tables(trained, tmp_path):  # noqa: F811
    model, _ = trained
    src, tgt = reversal_corpus(64)
    pairs = list(zip(tokens(src), tokens(tgt)))[:8]
    summary = analysis.analyze(model, pairs, pairs, str(tmp_path))["summary"]
    assert summary["ceiling_sentences"] == 8 and "ceiling_bleu_source_pb" in summary
    assert ("stored_bleu_stored_pb" in summary) == (model.pbs is not None)
    assert summary["retrieval_pairs"] == 8 and 0 <= summary["retrieval_p_at_1_source_to_target"] <= 1


def test_the_interlingua_is_retrieval_between_pbs_recognised_in_each_language(trained):  # noqa: F811
    model, _ = trained
    src, tgt = reversal_corpus(12, seed=1)
    src, tgt = tokens(src), tokens(tgt)
    src, tgt = src + [src[0]], tgt + [tgt[1]]  # a source again, with another reference: counted once
    found = analysis.interlingua(model, list(zip(src, tgt)))
    recognised = [model.recognize(next(iter(make_dataset(encode_all(vocab, sentences), batch_size=13)))["src"],
                                  reverse)["pb"].numpy()
                  for sentences, vocab, reverse in ((src, model.vocab1, False), (tgt, model.vocab2, True))]
    expected = bitext_retrieval(*recognised, [tuple(s) for s in src], [tuple(t) for t in tgt])
    assert found == pytest.approx({f"retrieval_{k}": v for k, v in expected.items()}, rel=1e-4)
    assert found["retrieval_pairs"] == 12
