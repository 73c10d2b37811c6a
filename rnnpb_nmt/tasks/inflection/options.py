"""The inflection task's options (``--task=inflection``)."""

import dataclasses

from rnnpb_nmt.options import option


@dataclasses.dataclass(frozen=True)
class DataOptions:
    inflection_target: str = option(
        "actions", "--task=inflection: what a model learns to write: actions (the form's characters and <step> "
        "actions, for --model=hard_attention) or form (the form's characters only: a soft-attention model)",
        choices=("actions", "form"), legacy="actions", only=("task", ("inflection",)))
