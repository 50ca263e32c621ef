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
    "survival": 4,
    "pipeline": 5,
    "model_selection": 5,
    # Tools above every layer: the command line, and estimator discovery (it imports every
    # estimator package to find the estimators; nothing in skdp imports it).
    "cli": 6,
    "discovery": 6,
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
    "survival",
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
_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _package_of(path: Path) -> str:
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def _layer_key(module: str) -> str | None:
    """The ``LAYERS`` key of an absolute skdp module name (None if it names no package)."""
    parts = module.split(".")
    if parts[0] != "skdp" or len(parts) < 2:
        return None
    return parts[1]


def _import_sites(source: str, module: str, is_package: bool, *, top_level_only=False):
    """Every import in ``source`` (the module ``module``), as ``(target, members)`` pairs.

    ``import a.b`` is ``("a.b", ())``; ``from a import b, c`` is ``("a", ("a.b", "a.c"))``
    (``b`` may be a submodule of ``a`` or a name defined in it); relative imports are
    resolved against the module's package. The first argument of
    ``importlib.import_module`` / ``__import__`` when it is a string constant, and every
    string constant that is a dotted ``skdp.`` module name, are ``(name, ())``.
    With ``top_level_only``, only what runs when the module is imported: nothing inside a
    function or lambda, and no bare string constant (a lazy ``__getattr__`` table is read
    only when a name is looked up).
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    stack = [ast.parse(source)]
    while stack:
        node = stack.pop()
        if top_level_only and isinstance(node, _FUNCTION_NODES):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                assert len(base) == len(package) - (node.level - 1), f"{module}: bad relative"
                prefix = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                prefix = node.module
            yield prefix, tuple(f"{prefix}.{a.name}" for a in node.names if a.name != "*")
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            arg = node.args[0]
            if (
                name in _IMPORT_FUNCTIONS
                and isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
            ):
                yield arg.value, ()
        elif (
            not top_level_only
            and isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _MODULE_STRING.fullmatch(node.value)
        ):
            yield node.value, ()


def _imports_of_source(source: str, module: str, is_package: bool):
    """Every module that ``source`` (the module ``module``) imports, as absolute names.

    Each import of :func:`_import_sites`, ``from a import b`` as both ``a`` and ``a.b``.
    Imports inside functions count.
    """
    for target, members in _import_sites(source, module, is_package):
        yield target
        yield from members


def _module_level_imports(source: str, module: str = "skdp._module"):
    """The modules imported when ``module`` (whose source is ``source``) is imported."""
    for target, _ in _import_sites(source, module, False, top_level_only=True):
        yield target


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
    assert _layering_error("base", "skdp.discovery") is not None  # into the top
    assert _layering_error("linear_model", "torch.nn") is not None
    assert _layering_error("linear_model", "skdp.variational") is None
    assert _layering_error("discovery", "skdp.sampling") is None
    assert _layering_error("utils", "skdp.discovery") is not None  # L0 -> top
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


def _import_graph(sources, *, top_level_only):
    """Module -> the modules of ``sources`` it imports (``{module: (source, is_package)}``).

    ``from a import b`` is an edge to ``a.b`` where that is a module, else to ``a`` (a name
    defined in ``a``). Importing ``a.b.c`` runs the packages ``a.b`` and ``a`` first: edges
    to them too, except to the importer's own packages (already being imported when it runs;
    a name read from one of them is still an edge, by the first rule).
    """
    graph = {}
    for module, (source, is_package) in sources.items():
        parts = module.split(".")
        own = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        edges = set()
        for target, members in _import_sites(
            source, module, is_package, top_level_only=top_level_only
        ):
            for hit in [m if m in sources else target for m in members] or [target]:
                hit_parts = hit.split(".")
                packages = {".".join(hit_parts[:i]) for i in range(1, len(hit_parts))} - own
                edges |= {m for m in packages | {hit} if m in sources and m != module}
        graph[module] = edges
    return graph


def _find_cycle(graph):
    """One import cycle of ``graph`` as ``[m1, m2, ..., m1]``, or None."""
    done, on_path = set(), []
    for start in sorted(graph):
        if start in done:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        on_path.append(start)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                on_path.pop()
                done.add(node)
            elif child in on_path:
                return on_path[on_path.index(child) :] + [child]
            elif child not in done:
                stack.append((child, iter(sorted(graph[child]))))
                on_path.append(child)
    return None


def _skdp_sources():
    return {_module_name(p): (p.read_text(), p.name == "__init__.py") for p in _modules()}


def test_cycle_finder_sees_cycles_hidden_in_functions():
    # The former cycle in skdp.utils: a top-level chain closed by a function-level import.
    sources = {
        "skdp.utils": ("", True),
        "skdp.utils._compat": ("from skdp.utils.validation import validate_data", False),
        "skdp.utils.validation": ("from skdp.utils._free import validate_data", False),
        "skdp.utils._free": ("def f():\n    from skdp.utils._compat import x", False),
    }
    assert _find_cycle(_import_graph(sources, top_level_only=True)) is None
    cycle = _find_cycle(_import_graph(sources, top_level_only=False))
    assert cycle is not None and set(cycle) == set(sources) - {"skdp.utils"}
    # A package that imports its submodule: the submodule may import a sibling through the
    # package (``from . import _sibling``), not a name that the package defines.
    sources = {
        "skdp.pkg": ("from skdp.pkg._a import A\nB = 1", True),
        "skdp.pkg._a": ("from skdp.pkg import _b\nA = 1", False),
        "skdp.pkg._b": ("import skdp.utils.validation", False),
    }
    assert _find_cycle(_import_graph(sources, top_level_only=True)) is None
    sources["skdp.pkg._b"] = ("from skdp.pkg import B", False)
    assert _find_cycle(_import_graph(sources, top_level_only=True)) == [
        "skdp.pkg",
        "skdp.pkg._a",
        "skdp.pkg._b",
        "skdp.pkg",
    ]


def test_no_import_cycles():
    """No cycle among skdp modules, neither at import time nor closed by an import inside a
    function (which would only hide it: import order would decide whether it works)."""
    sources = _skdp_sources()
    cycle = _find_cycle(_import_graph(sources, top_level_only=True))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
    cycle = _find_cycle(_import_graph(sources, top_level_only=False))
    assert cycle is None, (
        "import cycle held together by an import inside a function (or a lazy table): "
        + " -> ".join(cycle)
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
