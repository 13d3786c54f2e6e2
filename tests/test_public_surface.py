"""The public surface: flat package namespaces, and imports that load nothing heavy."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

HEAVY = ("plyvel", "numpy", "pykka", "litellm")


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("statement", ["import artoo.schemas", "import artoo"])
def test_importing_the_schemas_or_artoo_loads_nothing_heavy(statement: str) -> None:
    loaded = _loaded_after(statement)
    assert not [m for m in HEAVY if m in loaded]
    assert "artoo.actors.runtime.bus" not in loaded and "artoo.system" not in loaded


def test_artoo_names_load_on_first_use() -> None:
    loaded = _loaded_after("import artoo; artoo.System")
    assert "artoo.system" in loaded and "pykka" in loaded
    assert "litellm" not in loaded  # only a litellm model call imports it


@pytest.mark.parametrize("package", ["artoo", "artoo.actors", "artoo.schemas", "artoo.eventstore"])
def test_every_public_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
