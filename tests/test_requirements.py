"""requirements.txt is the pins of both stacks (requirements/*.txt), each marked with its Python."""

from helpers import ROOT

MARKERS = {"py311.txt": '; python_version < "3.12"', "py312plus.txt": '; python_version >= "3.12"'}


def pins(path):
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def test_requirements_txt_is_every_stacks_pins_marked_with_its_python():
    expected = [pin + marker for name, marker in MARKERS.items() for pin in pins(ROOT / "requirements" / name)]
    assert pins(ROOT / "requirements.txt") == expected
    assert sorted(p.name for p in (ROOT / "requirements").glob("*.txt")) == sorted(MARKERS)
