"""The package's layout says what depends on what: the core names no model family and no task, each
family and task registers itself from its own folder, no file edits Python's import path, and the
modules import each other in layers (docs/extending.md, "Layers"), without a cycle."""

import ast
import graphlib
import re

from rnnpb_nmt import registry

from helpers import ROOT

PACKAGE = ROOT / "rnnpb_nmt"
CORE = [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in ("models", "tasks")]
# The two base classes every model and task subclasses, and the registry's package docstrings, are
# the contract itself: they live beside the families but name none.
CONTRACTS = [PACKAGE / "models" / "base.py", PACKAGE / "models" / "teacher_forced.py", PACKAGE / "models" / "losses.py",
             PACKAGE / "tasks" / "base.py", PACKAGE / "models" / "__init__.py", PACKAGE / "tasks" / "__init__.py"]


def _imports(path):
    """The dotted names a file imports, at its top or inside a function: ``P.n`` for ``from P import n``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_the_core_imports_no_model_family_and_no_task():
    for path in CORE + CONTRACTS:
        for name in _imports(path):
            parts = name.split(".")
            if parts[:2] in (["rnnpb_nmt", "models"], ["rnnpb_nmt", "tasks"]) and len(parts) > 2:
                assert parts[2] in ("base", "teacher_forced", "losses"), f"{path.relative_to(ROOT)} imports {name}"


def _alternatives(names):
    return "|".join(sorted(map(re.escape, names), key=len, reverse=True))


def test_the_core_names_no_model_and_no_task():
    # A model name as a word (not a module path such as layers/hard_attention.py); a task name, an
    # English word and a JSON key too ("translation"), as a value given or compared: after "=" or "==".
    models = set(registry.models()) | set(registry.model_aliases())
    pattern = re.compile(rf"(?<![\w./-])({_alternatives(models)})(?![\w-])"
                         rf"|=\s*\(?[\"']?({_alternatives(registry.tasks())})\b")
    for path in CORE + CONTRACTS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = pattern.search(line)
            assert not found, f"{path.relative_to(ROOT)}:{number} names {found.group(0)!r}: {line.strip()}"


def test_every_model_and_task_registers_from_its_own_folder():
    for kind, table, folder in (("model", registry.models(), "models"), ("task", registry.tasks(), "tasks")):
        for name, cls in table.items():
            parts = cls.__module__.split(".")
            assert parts[:2] == ["rnnpb_nmt", folder] and len(parts) == 4, f"--{kind}={name}: {cls.__module__}"


def test_no_file_edits_the_import_path():
    # The package is installed (make installs it editable); tests find helpers.py and the run scripts
    # through pytest.ini's pythonpath. (The name is split so that this file does not match itself.)
    needle = "sys." + "path"
    files = [p for p in ROOT.rglob("*.py") if not any(part.startswith(".") or part in ("fixtures", "build")
                                                       for part in p.relative_to(ROOT).parts)]
    assert len(files) > 50
    for path in files:
        assert needle not in path.read_text(encoding="utf-8"), path.relative_to(ROOT)


# The package's layers, lowest first, by top-level module or folder of rnnpb_nmt (docs/extending.md,
# "Layers"): a module imports from its own layer and those below it, never from one above.
LAYERS = [
    {"errors", "options", "registry", "tf_stack", "precision", "progress", "metrics", "scores"},
    {"config", "flags"},
    {"data", "run_stats"},
    {"layers"},
    {"infer"},
    {"models", "tasks"},
    {"train"},
    {"api", "__init__"},
    {"serving"},
    {"cli", "demo_data"},
    {"__main__", "flag_reference"},
]


def _module(path):
    """The dotted name of a file of the package (a folder's ``__init__.py``: the folder's)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph():
    """Each module of the package and the package's modules it imports (for ``from P import n``, the
    module ``P.n``, or ``P`` when ``n`` is a name defined in it)."""
    paths = {_module(path): path for path in PACKAGE.rglob("*.py")}

    def module_of(name):
        while name not in paths and "." in name:
            name = name.rpartition(".")[0]
        return name if name in paths else None

    return {module: {imported for name in _imports(path) if (imported := module_of(name)) not in (None, module)}
            for module, path in paths.items()}


def _layer(module):
    """The index in LAYERS of a module's top-level module or folder (the package's own ``__init__``)."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    return next(number for number, layer in enumerate(LAYERS) if top in layer)


def test_every_top_level_module_and_folder_has_one_layer():
    tops = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in PACKAGE.rglob("*.py")}
    named = [top for layer in LAYERS for top in layer]
    assert len(named) == len(set(named))
    assert sorted(tops - set(named)) == [], "without a layer"
    assert sorted(set(named) - tops) == [], "in LAYERS, not in the package"


def test_no_module_imports_from_a_layer_above_its_own():
    graph = _import_graph()
    assert {"rnnpb_nmt.infer.translator", "rnnpb_nmt.run_stats"} <= graph["rnnpb_nmt.train.loop"]  # resolved
    upward = [f"{module} imports {imported}" for module, imports in sorted(graph.items())
              for imported in sorted(imports) if _layer(imported) > _layer(module)]
    assert not upward, "\n".join(upward)


def _cycle(graph):
    """A cycle of ``graph`` (module: the modules it imports), each module importing the next and the
    first again last; None if there is none."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as e:  # its cycle lists each module before one that imports it
        return list(reversed(e.args[1]))
    return None


def test_the_modules_import_each_other_in_no_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]  # one is seen
    cycle = _cycle(_import_graph())
    assert cycle is None, "import cycle: " + " imports ".join(cycle)
