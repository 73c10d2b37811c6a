"""The question-formation task's options (``--task=question_formation``)."""

import dataclasses
import typing

from rnnpb_nmt.options import option


@dataclasses.dataclass(frozen=True)
class DataOptions:
    grammar: typing.Optional[str] = option(None, "--task=question_formation: the grammar (question.gr) whose "
                                           "parses give each input's main and first auxiliary", legacy=None,
                                           only=("task", ("question_formation",)))
