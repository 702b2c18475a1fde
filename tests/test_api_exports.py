"""The public surface: ``solace.__all__`` names exactly what the package exports."""

from __future__ import annotations

import inspect

import solace


def test_every_name_in_all_is_exported_and_sorted() -> None:
    for name in solace.__all__:
        assert hasattr(solace, name), name
    assert list(solace.__all__) == sorted(solace.__all__, key=lambda n: (n[0].islower(), n))


def test_the_issue_api_names_are_public() -> None:
    for name in ("open_runtime", "Runtime", "ReplayClock", "Hit", "load_config", "Config"):
        assert name in solace.__all__


def test_public_classes_and_functions_have_docstrings() -> None:
    for name in solace.__all__:
        obj = getattr(solace, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"solace.{name} has no docstring"


def test_no_public_name_leaks_outside_all() -> None:
    public = {n for n in vars(solace) if not n.startswith("_")}
    modules = {n for n in public if inspect.ismodule(getattr(solace, n))}
    assert public - modules - {"annotations"} == set(solace.__all__)
