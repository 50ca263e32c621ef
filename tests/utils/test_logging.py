"""Progress through the ``"skdp"`` logger (skdp.utils: log_progress, ProgressHandler,
verbose_handler)."""

from __future__ import annotations

import io
import logging

import pytest

from skdp.utils import (
    LOGGER_NAME,
    PROGRESS_KEY,
    ProgressHandler,
    get_logger,
    log_progress,
    verbose_handler,
)


def _payloads(caplog):
    return [getattr(r, PROGRESS_KEY) for r in caplog.records if hasattr(r, PROGRESS_KEY)]


def test_get_logger_is_in_the_skdp_hierarchy():
    assert get_logger().name == LOGGER_NAME
    assert get_logger("skdp.density._flow_density").name == "skdp.density._flow_density"
    assert get_logger("mine").name == "skdp.mine"


def test_private_loss_is_dropped_and_payload_is_structured(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    log = get_logger("test")
    log_progress(log, estimator="E", step=1, total=4, epsilon_spent=0.5, loss=2.0)
    log_progress(log, estimator="E", step=2, total=4, loss=2.0, private=False)
    log_progress(log, estimator="E", step=3, total=4, epsilon_spent=float("inf"))
    first, second, third = _payloads(caplog)
    assert first == {
        "estimator": "E",
        "phase": "fit",
        "step": 1,
        "total": 4,
        "epsilon_spent": 0.5,
        "loss": None,
    }
    assert "2.0" not in caplog.records[0].getMessage()
    assert second["loss"] == 2.0 and "not private" in caplog.records[1].getMessage()
    assert third["epsilon_spent"] is None


def test_nothing_is_built_when_info_is_off(caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER_NAME)
    log_progress(get_logger("test"), estimator="E", step=1, total=1)
    assert not _payloads(caplog)


def test_progress_handler_writes_a_line_per_tenth_off_a_terminal():
    stream = io.StringIO()
    handler = ProgressHandler(stream)
    log = logging.getLogger("skdp.test_handler")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        for t in range(1, 101):
            log_progress(log, estimator="E", step=t, total=100, epsilon_spent=t / 100)
        log.info("a plain record")
    finally:
        log.removeHandler(handler)
        log.setLevel(logging.NOTSET)
    lines = stream.getvalue().splitlines()
    assert 10 <= len(lines) <= 12
    assert lines[-2].startswith("E fit: 100/100 steps") and "eps so far 1" in lines[-2]
    assert lines[-1] == "a plain record"


def test_verbose_handler_attaches_for_the_duration_and_restores_the_level():
    logger = logging.getLogger(LOGGER_NAME)
    before_handlers, before_level = list(logger.handlers), logger.level

    def progress_handlers():
        return [h for h in logger.handlers if isinstance(h, ProgressHandler)]

    with verbose_handler(0) as h:
        assert h is None and not progress_handlers()
    with verbose_handler(1) as h:
        assert progress_handlers() == [h] and logger.getEffectiveLevel() <= logging.INFO
        with verbose_handler(2) as inner:  # an outer handler (the CLI's) is not doubled
            assert inner is None and progress_handlers() == [h]
    assert logger.handlers == before_handlers and logger.level == before_level
    with pytest.raises(RuntimeError), verbose_handler(1):
        raise RuntimeError
    assert logger.handlers == before_handlers and logger.level == before_level


class _TTY(io.StringIO):
    def isatty(self):
        return True


def test_tqdm_bar_on_a_terminal_when_installed(monkeypatch):
    """With ``tqdm`` importable and a terminal, one bar per phase, advanced to the step."""
    import sys
    import types

    made = []

    class FakeBar:
        def __init__(self, total, desc, file, leave):
            self.total, self.n, self.closed, self.postfix = total, 0, False, None
            made.append(self)

        def update(self, k):
            self.n += k

        def set_postfix(self, post, refresh=False):
            self.postfix = post

        def close(self):
            self.closed = True

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    handler = ProgressHandler(_TTY())
    log = logging.getLogger("skdp.test_tqdm")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        for t in (1, 3, 4):
            log_progress(log, estimator="E", step=t, total=4, epsilon_spent=0.1 * t)
        log_progress(log, estimator="E", phase="other", step=1, total=2)
    finally:
        log.removeHandler(handler)
        log.setLevel(logging.NOTSET)
        handler.close()
    assert len(made) == 2
    assert made[0].n == 4 and made[0].closed and made[0].postfix == {"eps": "0.4"}
    assert made[1].n == 1 and made[1].closed  # closed with the handler


def test_text_bar_on_a_terminal_without_tqdm(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    stream = _TTY()
    handler = ProgressHandler(stream)
    log = logging.getLogger("skdp.test_text")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        for t in (1, 2):
            log_progress(log, estimator="E", step=t, total=2)
    finally:
        log.removeHandler(handler)
        log.setLevel(logging.NOTSET)
    out = stream.getvalue()
    assert out.count("\r") == 2 and out.endswith("2/2 steps\n") and "[" in out
