"""``import skdp`` is cheap and lazy, and the layers only import downward."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import skdp

ROOT = Path(skdp.__file__).parent

# Layer of every skdp package (ARCHITECTURE.md). Imports may only go to a lower layer,
# or within the same package; estimator packages (layer 4) never import each other.
LAYERS = {
    "utils": 0,
    "utils.discovery": 0,
    "exceptions": 0,
    "base": 0,
    "datasets": 0,
    "accounting": 1,
    "flows": 2,
    "mechanisms": 2,
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
    "cli": 5,
    "quickstart": 5,
}
# L0 modules may import each other; utils is the bottom of L0.
L0_ORDER = {"utils": 0, "exceptions": 0, "base": 1, "datasets": 0, "utils.discovery": 2}
# Layer-4 packages that may import other layer-4 packages (documented in doc/architecture.rst).
L4_ALLOWED = {
    "auditing": {"metrics"},
}
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
    "datasets",
}


def _package_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    if rel.as_posix() == "utils/discovery.py":
        return "utils.discovery"  # top of L0: finds estimators, so it may import base
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def _modules():
    return sorted(p for p in ROOT.rglob("*.py") if p.name != "__init__.py" or p.parent != ROOT)


def test_all_packages_have_a_layer():
    for path in _modules():
        pkg = _package_of(path)
        assert pkg in LAYERS, f"{path}: package {pkg!r} has no layer in this test"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_import_layering(path):
    pkg = _package_of(path)
    for mod in _imports(path):
        parts = mod.split(".")
        if parts[0] == "torch" and pkg in NO_TORCH:
            pytest.fail(f"{path.relative_to(ROOT)} imports torch but {pkg} must not")
        if parts[0] == "torch" and pkg == "utils" and path.name != "_torch.py":
            pytest.fail(f"{path.relative_to(ROOT)}: only utils/_torch.py may import torch in L0")
        if parts[0] != "skdp" or len(parts) < 2:
            continue
        target = parts[1]
        if target == pkg.split(".")[0] and pkg != "utils.discovery" or target not in LAYERS:
            continue
        src_layer, dst_layer = LAYERS[pkg], LAYERS[target]
        if src_layer == dst_layer == 0:
            assert L0_ORDER[target] <= L0_ORDER[pkg], f"{path}: L0 {pkg} imports {target}"
            continue
        if src_layer == dst_layer == 4 and target in L4_ALLOWED.get(pkg, ()):
            continue
        assert dst_layer < src_layer, (
            f"{path.relative_to(ROOT)} ({pkg}, layer {src_layer}) imports {mod} "
            f"(layer {dst_layer}): imports must go downward"
        )


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
    code = (
        "import sys, importlib\n"
        "for m in ['skdp.accounting', 'skdp.mechanisms', 'skdp.linear_model', 'skdp.metrics',"
        " 'skdp.ilp', 'skdp.cluster', 'skdp.base', 'skdp.utils.validation']:\n"
        "    try: importlib.import_module(m)\n"
        "    except ModuleNotFoundError as e:\n"
        "        if e.name != m: raise\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_lazy_top_level_attribute_errors():
    with pytest.raises(AttributeError):
        skdp.NoSuchEstimator  # noqa: B018
