"""``import skdp`` is cheap and lazy, and the layers only import downward."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import skdp

ROOT = Path(skdp.__file__).parent

# Layer of every skdp package (doc/architecture.rst). Imports may only go to a lower layer,
# or within the same package; packages of one layer (above L0) never import each other.
# There are no exceptions.
LAYERS = {
    "utils": 0,
    "exceptions": 0,
    "datasets": 0,
    "accounting": 1,
    "flows": 2,
    "mechanisms": 2,
    # The estimator contract (DPEstimatorMixin): only estimator packages (L4 and up) import
    # it, and it reads the accountant registry (L1) to validate ``accountant``.
    "base": 2,
    "training": 3,
    "variational": 3,
    "density": 4,
    "synthesis": 4,
    "sampling": 4,
    "linear_model": 4,
    "ilp": 4,
    "cluster": 4,
    "metrics": 4,
    "auditing": 4,
    "preprocessing": 4,
    "pipeline": 5,
    "model_selection": 5,
    # Tools above every layer: the command line, and estimator discovery (it imports every
    # estimator package to find the estimators; nothing in skdp imports it).
    "cli": 6,
    "utils.discovery": 6,
}
# L0 modules may import each other in this order; utils is the bottom of L0.
L0_ORDER = {"utils": 0, "exceptions": 0, "datasets": 0}
NO_TORCH = {
    "accounting",
    "mechanisms",
    "linear_model",
    "metrics",
    "ilp",
    "cluster",
    "preprocessing",
    "pipeline",
    "model_selection",
    "base",
    "exceptions",
}
# Packages that may use torch only inside functions (importing them never loads torch):
# datasets holds torch log-likelihood models next to its numpy simulators.
TORCH_IN_FUNCTIONS_ONLY = {"datasets"}
# A string constant that names an skdp module (a lazy ``__getattr__`` table, a list of
# packages to import, an ``importlib.import_module`` argument) counts as an import of it.
_MODULE_STRING = re.compile(r"skdp(\.[A-Za-z_][A-Za-z0-9_]*)+")
_IMPORT_FUNCTIONS = {"import_module", "__import__"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _package_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    if rel.as_posix() == "utils/discovery.py":
        return "utils.discovery"
    return rel.parts[0].removesuffix(".py")


def _layer_key(module: str) -> str | None:
    """The ``LAYERS`` key of an absolute skdp module name (None if it names no package)."""
    parts = module.split(".")
    if parts[0] != "skdp" or len(parts) < 2:
        return None
    if parts[1:3] == ["utils", "discovery"]:
        return "utils.discovery"
    return parts[1]


def _imports_of_source(source: str, module: str, is_package: bool):
    """Every module that ``source`` (the module ``module``) imports, as absolute names.

    Counts ``import a.b``; ``from a import b`` (as ``a`` and ``a.b``, since ``b`` may be a
    submodule); relative imports resolved against the module's package; the first argument
    of ``importlib.import_module`` / ``__import__`` when it is a string constant; and every
    string constant that is a dotted ``skdp.`` module name. Imports inside functions count.
    """
    tree = ast.parse(source)
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                assert len(base) == len(package) - (node.level - 1), f"{module}: bad relative"
                parts = base + (node.module.split(".") if node.module else [])
                prefix = ".".join(parts)
            else:
                prefix = node.module
            yield prefix
            for alias in node.names:
                if alias.name != "*":
                    yield f"{prefix}.{alias.name}"
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            arg = node.args[0]
            if (
                name in _IMPORT_FUNCTIONS
                and isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
            ):
                yield arg.value
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _MODULE_STRING.fullmatch(node.value):
                yield node.value


def _module_level_imports(source: str):
    """The ``import``/``from`` statements executed when the module is imported."""
    stack = list(ast.parse(source).body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _imports(path: Path):
    yield from _imports_of_source(path.read_text(), _module_name(path), path.name == "__init__.py")


def _modules():
    # skdp/__init__.py is the lazy public front of every package, above all layers.
    return sorted(p for p in ROOT.rglob("*.py") if p.name != "__init__.py" or p.parent != ROOT)


def test_all_packages_have_a_layer():
    for path in _modules():
        pkg = _package_of(path)
        assert pkg in LAYERS, f"{path}: package {pkg!r} has no layer in this test"


def test_import_finder_sees_every_kind_of_import():
    source = """
import skdp.flows
from skdp import training
from . import _sibling
from .. import mechanisms
from ..accounting._rdp import compute
import importlib
importlib.import_module("skdp.density")
__import__("skdp.ilp")
_LAZY = {"Name": "skdp.synthesis._gan"}
def f():
    from skdp.cluster import SubsampledExpMedian
"""
    found = set(_imports_of_source(source, "skdp.variational._expm", is_package=False))
    expected = {
        "skdp.flows",
        "skdp.training",
        "skdp.variational._sibling",
        "skdp.mechanisms",
        "skdp.accounting._rdp",
        "skdp.density",
        "skdp.ilp",
        "skdp.synthesis._gan",
        "skdp.cluster",
    }
    assert expected <= found
    # In a package's __init__, "." is the package itself.
    found = set(_imports_of_source("from . import _x", "skdp.flows", is_package=True))
    assert "skdp.flows._x" in found
    # A docstring that mentions a module is not an import of it.
    found = set(_imports_of_source('"""See :mod:`skdp.sampling`."""', "skdp.flows", False))
    assert not {m for m in found if m.startswith("skdp")}


def _layering_error(pkg: str, mod: str) -> str | None:
    """Why ``pkg`` may not import ``mod`` (None if it may)."""
    parts = mod.split(".")
    if parts[0] == "torch" and pkg in NO_TORCH:
        return f"imports torch but {pkg} must not"
    target = _layer_key(mod)
    if target is None or target == pkg or target not in LAYERS:
        return None
    if target == pkg.split(".")[0] and pkg != "utils.discovery":
        return None
    src_layer, dst_layer = LAYERS[pkg], LAYERS[target]
    if src_layer == dst_layer == 0:
        if L0_ORDER[target] <= L0_ORDER[pkg]:
            return None
        return f"L0 {pkg} imports {target}, which sits above it in L0"
    if dst_layer < src_layer:
        return None
    return f"({pkg}, layer {src_layer}) imports {mod} (layer {dst_layer}): imports must go downward"


def test_layering_rule_rejects_sideways_and_upward_imports():
    assert _layering_error("linear_model", "skdp.sampling") is not None  # L4 -> L4
    assert _layering_error("auditing", "skdp.metrics._ranking") is not None  # L4 -> L4
    assert _layering_error("pipeline", "skdp.model_selection") is not None  # L5 -> L5
    assert _layering_error("training", "skdp.variational") is not None  # L3 -> L3
    assert _layering_error("utils", "skdp.auditing._checks") is not None  # L0 -> L4
    assert _layering_error("utils", "skdp.base") is not None  # L0 -> L2
    assert _layering_error("utils", "skdp.datasets") is None  # within L0
    assert _layering_error("base", "skdp.utils.discovery") is not None  # into the top
    assert _layering_error("linear_model", "torch.nn") is not None
    assert _layering_error("linear_model", "skdp.variational") is None
    assert _layering_error("utils.discovery", "skdp.sampling") is None
    assert _layering_error("sampling", "skdp.sampling._flow_vi") is None


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_import_layering(path):
    pkg = _package_of(path)
    for mod in _imports(path):
        if mod.split(".")[0] == "torch" and pkg == "utils" and path.name != "_torch.py":
            pytest.fail(f"{path.relative_to(ROOT)}: only utils/_torch.py may import torch in L0")
        error = _layering_error(pkg, mod)
        assert error is None, f"{path.relative_to(ROOT)} {error}"
    if pkg in TORCH_IN_FUNCTIONS_ONLY:
        for mod in _module_level_imports(path.read_text()):
            assert mod.split(".")[0] != "torch", (
                f"{path.relative_to(ROOT)} imports torch at module level but {pkg} may use "
                "it only inside functions"
            )


def test_module_level_import_finder():
    source = "import numpy\nif True:\n    import scipy\nclass A:\n    import json\n"
    source += "def f():\n    import torch\n"
    assert set(_module_level_imports(source)) == {"numpy", "scipy", "json"}


def test_import_skdp_is_light_and_fast():
    code = (
        "import sys, time; t=time.perf_counter(); import skdp; dt=time.perf_counter()-t;"
        "print(dt, 'torch' in sys.modules, 'sklearn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dt, torch_loaded, sklearn_loaded = out.stdout.split()
    assert torch_loaded == "False"
    assert sklearn_loaded == "False"
    assert float(dt) < 0.5


def test_no_torch_packages_do_not_load_torch():
    packages = sorted(f"skdp.{pkg}" for pkg in NO_TORCH | TORCH_IN_FUNCTIONS_ONLY)
    code = (
        "import sys, importlib\n"
        f"for m in {packages + ['skdp.utils.validation']!r}:\n"
        "    importlib.import_module(m)\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_lazy_top_level_attribute_errors():
    with pytest.raises(AttributeError):
        skdp.NoSuchEstimator  # noqa: B018
