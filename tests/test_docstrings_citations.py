"""Docstrings and comments cite papers and skdp's own docs, not internal spec files.

The implementation specs (``specs/README.md``, ``dp_flow.md``, ``expm_flow.md``, ``dp_gan.md``,
``lantz.md``) and the team's ``ARCHITECTURE.md`` are not shipped with skdp, so a reader of
"spec README §2 row 6" has nothing to look up. Cite the paper (author, year, section) or the
docs (``:ref:`neighbouring-relation```, ``:doc:`architecture```) instead (issue 17, §5).

Every comment and string literal (docstrings, and strings spliced into docstrings) of every
module under ``skdp/`` is scanned, except the paths in ``EXEMPT`` (now empty; it was the
list of files still being cleaned up).
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

import skdp

ROOT = Path(skdp.__file__).resolve().parent

#: Paths (relative to ``skdp/``; a trailing ``/`` exempts a package) still allowed to cite
#: internal spec files. Empty: every module is scanned.
EXEMPT: tuple[str, ...] = ()

#: What an internal spec reference looks like.
PATTERNS = {
    "spec section": re.compile(
        r"\bspecs?\b\s*(?:§|README|[A-Z]\s*§|``|\w+\.md|:|\(|section)", re.I
    ),
    "specs/ path": re.compile(r"\bspecs/"),
    "README section": re.compile(r"\bREADME\b\s*(?:§|section|row)", re.I),
    "spec file": re.compile(r"\b(?:dp_flow|dp_gan|expm_flow|lantz)\.md\b"),
    "design file": re.compile(r"\bARCHITECTURE\.md\b"),
}


def _exempt(rel):
    return any(rel == e or (e.endswith("/") and rel.startswith(e)) for e in EXEMPT)


def _modules():
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _text_tokens(source):
    """(line, text) of every comment and string literal (f-string pieces included)."""
    kinds = {tokenize.COMMENT, tokenize.STRING}
    kinds |= {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in kinds:
            yield tok.start[0], tok.string


#: a numpydoc parameter named ``spec`` (``spec : ColumnSpec``) is not a citation
_PARAMETER_LINE = re.compile(r"^[ \t]*specs?[ \t]+:[ \t]+\w", re.M)


def _offences(path):
    found = []
    for line, text in _text_tokens(path.read_text(encoding="utf-8")):
        params = list(_PARAMETER_LINE.finditer(text))
        for kind, pattern in PATTERNS.items():
            for m in pattern.finditer(text):
                if any(p.start() <= m.start() < p.end() for p in params):
                    continue  # a parameter named spec, not a citation
                found.append(f"{line + text[: m.start()].count(chr(10))}: {kind}: {m.group(0)!r}")
    return found


@pytest.mark.parametrize(
    "rel",
    [r for r in (p.relative_to(ROOT).as_posix() for p in _modules()) if not _exempt(r)],
)
def test_no_internal_spec_references(rel):
    offences = _offences(ROOT / rel)
    assert not offences, (
        f"skdp/{rel} cites internal spec files; cite the paper or skdp's docs instead:\n"
        + "\n".join(offences)
    )


def test_patterns_catch_the_old_forms_and_spare_ordinary_text():
    bad = [
        "(spec README §2 row 6)",
        "spec E §1.4",
        "(spec ``lantz.md`` §1.1)",
        "expm_flow.md §3.4",
        "Spec: ``dp_flow.md`` §1.8",
        "see specs/README.md",
        "(spec §6.4)",
        "README §2 row 8",
        "(ARCHITECTURE.md, spec README §2 row 14)",
    ]
    good = [
        "for spec in schema:",
        "f'column {spec.name!r}'",
        "Lantz 2016 §5.4.2",
        "Su et al. (2023), §4.3",
        ":ref:`neighbouring-relation`",
        "the ColumnSpec of a column",
    ]
    for text in bad:
        assert any(p.search(text) for p in PATTERNS.values()), text
    for text in good:
        assert not any(p.search(text) for p in PATTERNS.values()), text


def test_exemptions_still_exist():
    for rel in EXEMPT:
        assert (ROOT / rel).exists(), f"{rel} is gone: drop it from EXEMPT"


def test_a_parameter_named_spec_is_not_a_citation(tmp_path):
    ok = tmp_path / "ok.py"
    ok.write_text('"""Doc.\n\n    Parameters\n    ----------\n    spec : ColumnSpec\n"""\n')
    assert _offences(ok) == []
    bad = tmp_path / "bad.py"
    bad.write_text('"""See the spec: section 3 of dp_gan.md."""\n')
    assert _offences(bad)
