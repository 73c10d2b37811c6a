"""TensorBoard summaries of a training run, in ``<working_dir>/logs`` (``tensorboard --logdir``)."""

import os

import tensorflow as tf

from rnnpb_nmt.data import files

# training_stats.json names -> TensorBoard tags; ``mean_<term>`` rows become ``train/<term>``,
# and names that already hold a "/" (``pb/...``, ``learning_rate/...``, ``monitor/...``) stay.
TAGS = {"train_perplexity": "perplexity/train", "dev_perplexity": "perplexity/dev", "dev_score": "score/dev",
        "seconds": "time/epoch_seconds", "train_seconds": "time/train_seconds"}


def tag(name):
    if name in TAGS:
        return TAGS[name]
    if name.startswith("mean_"):
        return "train/" + name[len("mean_"):]
    return name if "/" in name else None


class Summaries:
    """Writes one point per epoch for every number of the epoch's statistics row; a write that
    fails (a full disk) is a UserError naming ``logs/``."""

    def __init__(self, working_dir):
        self.logdir = os.path.join(working_dir, "logs")
        with self._writing():
            self.writer = tf.summary.create_file_writer(self.logdir)

    def _writing(self):
        return files.writing(self.logdir, (OSError, tf.errors.OpError))

    def write_epoch(self, record):
        """A point for each number of ``record`` (an EpochRecord), tagged by its training_stats.json key."""
        with self._writing():
            with self.writer.as_default(step=record.epoch):
                for name, value in record.items():
                    if tag(name) and isinstance(value, (int, float)):
                        tf.summary.scalar(tag(name), value)
            self.writer.flush()
