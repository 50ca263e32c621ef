"""Sphinx configuration for the skdp documentation.

Build: ``python -m sphinx -W -b html doc doc/_build/html`` (or ``make -C doc html``).
Set ``SKDP_DOC_GALLERY=0`` to skip running the example gallery (fast build).
"""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import skdp  # noqa: E402

project = "skdp"
author = "the skdp developers"
copyright = "2026, the skdp developers"
release = skdp.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
templates_path = ["_templates"]
exclude_patterns = ["_build", "generated/README.rst"]
html_theme = "alabaster"
# Docstrings inherited from scikit-learn (score, set_*_request) cross-reference labels of
# scikit-learn's own documentation, which this offline build cannot resolve.
suppress_warnings = ["ref.ref", "ref.term"]
html_static_path = []

intersphinx_mapping = {}

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"quickstart\.py",
    "plot_gallery": os.environ.get("SKDP_DOC_GALLERY", "1") != "0",
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
}
