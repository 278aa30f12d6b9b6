"""spark_kpl.progress: when a write shows its progress line, without Spark: on a terminal or in IPython by
default, never in logs or CI unless asked, and nothing to ask on Spark Connect."""

from __future__ import annotations

import io
import sys
import types

import pytest

from spark_kpl.progress import interactive, progress_line


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class ConnectSession:
    """What progress_line sees of a Spark Connect session: no driver JVM."""


def test_a_terminal_is_watched_and_a_pipe_is_not():
    assert interactive(Terminal())
    assert not interactive(io.StringIO())


def test_an_ipython_session_is_watched_whatever_its_stream(monkeypatch):
    shell = types.ModuleType("IPython")
    shell.get_ipython = lambda: object()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", shell)
    assert interactive(io.StringIO())
    shell.get_ipython = lambda: None  # type: ignore[attr-defined]
    assert not interactive(io.StringIO())


def test_the_line_is_off_when_unwatched_or_switched_off(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert progress_line(ConnectSession(), "key", None) is None  # type: ignore[arg-type]
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress_line(ConnectSession(), "key", False) is None  # type: ignore[arg-type]


def test_asking_for_it_on_spark_connect_warns_and_shows_nothing(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with pytest.warns(UserWarning, match="progress=True shows nothing on Spark Connect"):
        assert progress_line(ConnectSession(), "key", True) is None  # type: ignore[arg-type]
