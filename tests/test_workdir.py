"""A damaged working directory gives a UserError naming the damaged file, never a traceback."""

import json
import re

import pytest

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.train import workdir

from helpers import models, untrained_working_dir


def rewrite(name, content):
    return lambda wd: (wd / name).write_bytes(content)


def edit_hparams(key, value):
    """hparams.json with one value changed, as a hand edit would."""
    def edit(wd):
        params = json.loads((wd / "hparams.json").read_text())
        (wd / "hparams.json").write_text(json.dumps({**params, key: value}))
    return edit


def truncate_checkpoint_data(wd):
    for data in (wd / "best").glob("*.data-*"):
        data.write_bytes(data.read_bytes()[:100])


def damage_checkpoint_index(wd):
    for index in (wd / "best").glob("*.index"):
        index.write_bytes(b"garbage")


def remove_checkpoints(wd):
    for path in (wd / "best").iterdir():
        path.unlink()


@pytest.mark.parametrize("damage, message", [
    (rewrite("hparams.json", b'{"model": "encdec", "units": 3'), "hparams.json: corrupted"),
    (rewrite("hparams.json", b'{"model": "encdec"}'), "hparams.json: corrupted (no "),
    (rewrite("hparams.json", b'["encdec"]'), "hparams.json: corrupted (not a JSON object)"),
    (rewrite("hparams.json", b'{"model": "encdec\xff"}'), "hparams.json: corrupted ('utf-8' codec can't decode"),
    (rewrite("hparams.json", b'{"model": "no_such_model"}'), "hparams.json: corrupted (unknown model 'no_such_model')"),
    (edit_hparams("units", "16"), "hparams.json: corrupted (units='16' is not of type int)"),
    (edit_hparams("units", -1), "hparams.json: corrupted (units=-1: must be >"),
    (edit_hparams("learning_rate", True), "hparams.json: corrupted (learning_rate=True is not of type float)"),
    (edit_hparams("beam_size", None), "hparams.json: corrupted (beam_size=None is not of type int)"),
    (edit_hparams("attention", "bogus"), "hparams.json: corrupted (attention='bogus': not one of 'none'"),
    (edit_hparams("task", "nosuch"), "hparams.json: corrupted (unknown task 'nosuch')"),
    (lambda wd: (wd / "hparams.json").unlink(), "hparams.json missing"),
    (lambda wd: (wd / "vocab2.txt").unlink(), "vocab2.txt: vocabulary file missing"),
    (rewrite("vocab1.txt", b"<pad>\n<start>\n<end>\n<unk>\n\xff\n"), "vocab1.txt: corrupted (not valid UTF-8"),
    (rewrite("vocab1.txt", b"the\ndog\n"), "vocab1.txt: not a vocabulary file"),
    (rewrite("vocab1.txt", b"<pad>\n<start>\n<end>\n<unk>\nthe\n"), "best/ckpt-1: cannot restore weights"),
    (truncate_checkpoint_data, "best/ckpt-1: cannot restore weights"),
    (damage_checkpoint_index, "best/ckpt-1: cannot restore weights"),
    (remove_checkpoints, "best: no saved weights"),
])
def test_damaged_working_dir_names_the_damage(demo_data, tmp_path, damage, message):
    untrained_working_dir(tmp_path, demo_data, model="encdec")
    workdir.load_model(str(tmp_path), models())  # loads while intact
    damage(tmp_path)
    with pytest.raises(UserError, match=re.escape(message)) as error:
        workdir.load_model(str(tmp_path), models())
    assert "\n" not in str(error.value)

