"""Exceptions of the ``cpbench`` package.

Every error of the Rust crates reaches Python as one of these, with the message the
command line prints after ``error:`` (the error, then one ``  caused by: ...`` line per cause
that adds something).
"""

from __future__ import annotations

__all__ = ["CpbenchError", "CpbenchFileNotFoundError"]


class CpbenchError(ValueError):
    """An error of cpbench: a malformed or inconsistent instance file, an unknown solver or
    setting, invalid settings of the executor, a locked results folder, ... The message is
    the one ``cpbench`` prints."""


class CpbenchFileNotFoundError(CpbenchError, FileNotFoundError):
    """A file or folder cpbench was asked to read does not exist (also a
    ``FileNotFoundError``, so ``except FileNotFoundError`` catches it)."""
