"""Which ``--model`` and ``--task`` names exist: each class registers itself beside its definition.

As fairseq's ``register_model``: a model family's module decorates its class with
``@register_model("name")``, a task's with ``@register_task("name")``. The core names none of
them; ``models()`` and ``tasks()`` import every family under ``rnnpb_nmt/models/`` (its ``model``
module) and every task under ``rnnpb_nmt/tasks/`` (its ``task`` module), so that adding a folder is
all it takes to add a model or a task (docs/extending.md).
"""

import functools
import importlib
import importlib.util
import pkgutil
import typing

_MODELS, _TASKS, _ALIASES = {}, {}, {}


def register_model(name, aliases=()):
    """Class decorator: ``--model=name`` builds this class (``cls(config, vocab1, vocab2)``);
    ``--model=alias`` means ``name`` (a run saves ``name``)."""
    _ALIASES.update(dict.fromkeys(aliases, name))
    return _register(_MODELS, name, "model")


def model_aliases():
    """Other spellings of --model names -> the names."""
    _discover("rnnpb_nmt.models", "model")
    return dict(_ALIASES)


def register_task(name):
    """Class decorator: ``--task=name`` reads and scores data with this class (``cls(config)``)."""
    return _register(_TASKS, name, "task")


def _register(table, name, kind):
    def decorate(cls):
        if table.get(name, cls) is not cls:
            raise ValueError(f"--{kind}={name} is registered twice: {table[name].__name__} and {cls.__name__}")
        table[name] = cls
        return cls
    return decorate


def _discover(package, module):
    """Import ``package.<sub>.<module>`` for every sub-package, so that their classes register."""
    root = importlib.import_module(package)
    for info in pkgutil.iter_modules(root.__path__):
        if info.ispkg:
            importlib.import_module(f"{package}.{info.name}.{module}")


@functools.cache  # the folders do not change while a process runs; config reads this often
def option_modules():
    """The ``options`` modules of every model family, then of every task, that has one: the
    families in their ``ORDER`` (then by name), the tasks by name. They import no TensorFlow."""
    found = []
    for package in ("rnnpb_nmt.models", "rnnpb_nmt.tasks"):
        root = importlib.import_module(package)
        modules = [importlib.import_module(f"{package}.{info.name}.options") for info in pkgutil.iter_modules(root.__path__)
                   if info.ispkg and importlib.util.find_spec(f"{package}.{info.name}.options")]
        found += sorted(modules, key=lambda m: (getattr(m, "ORDER", len(modules)), m.__name__))
    return tuple(found)


class Preset(typing.NamedTuple):
    """A named configuration, ``--preset=name``: flag values (flat names) that flags given override."""
    name: str
    help: str
    values: dict

    def flags(self):
        """The flags it stands for, as a command line would give them."""
        return " ".join(f"--{k}" if v is True else f"--{k}={v}" for k, v in self.values.items())


@functools.cache
def presets():
    """--preset names -> ``Preset``s: the ``PRESETS`` ({name: (help, values)}) of the ``presets``
    module beside a model family's ``options`` module, in the families' order (``option_modules``)."""
    found = {}
    for module in option_modules():
        family = module.__name__.rpartition(".")[0]
        if module.__name__.startswith("rnnpb_nmt.models.") and importlib.util.find_spec(f"{family}.presets"):
            for name, (text, values) in importlib.import_module(f"{family}.presets").PRESETS.items():
                found[name] = Preset(name, text, dict(values))
    return found


def models():
    """--model names -> model classes (``rnnpb_nmt.models.base.NMTModel`` subclasses)."""
    _discover("rnnpb_nmt.models", "model")
    return dict(_MODELS)


def tasks():
    """--task names -> task classes (``rnnpb_nmt.tasks.base.Task`` subclasses)."""
    _discover("rnnpb_nmt.tasks", "task")
    return dict(_TASKS)
