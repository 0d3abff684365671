"""The command line's argument parser and argument types (used by `mockbroker` and `mockbroker healthcheck`).

Every argument error is one line, `PROG: error: WHAT (see PROG --help)`, exit code 2, with no usage block;
the types name the value given and what is allowed, and keep their bounds and options as attributes so the
error sweep (tests/test_cli_errors.py) makes its bad values from the parser itself.
"""

from __future__ import annotations

import argparse
import os
from typing import NoReturn


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `PROG: error: WHAT (see PROG --help)`, exit code 2; usage only with --help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class IntRange:
    """An argument type: a whole number in lo..hi (hi None: no upper bound). The bounds are attributes so
    the error sweep (tests/test_cli_errors.py) makes its bad values from the parser."""

    def __init__(self, what: str, lo: int, hi: int | None = None) -> None:
        self.what, self.lo, self.hi = what, lo, hi
        self.__name__ = what  # argparse names the type in some messages

    def __call__(self, text: str) -> int:
        bounds = f"{self.lo}..{self.hi}" if self.hi is not None else f"at least {self.lo}"
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {self.what} must be a whole number, {bounds}") from None
        if value < self.lo or (self.hi is not None and value > self.hi):
            raise argparse.ArgumentTypeError(f"{text!r}: {self.what} must be {bounds}")
        return value


class Choice:
    """An argument type: one of `options`, case-insensitive (the option's spelling out)."""

    def __init__(self, what: str, options: tuple[str, ...]) -> None:
        self.what, self.options = what, options
        self.__name__ = what

    def __call__(self, text: str) -> str:
        for option in self.options:
            if option.lower() == text.strip().lower():
                return option
        raise argparse.ArgumentTypeError(f"{text!r}: {self.what} must be one of {', '.join(self.options)}")


class ExistingFile:
    """An argument type: the path of a file that exists (named in the error when it does not)."""

    __name__ = "file"

    def __call__(self, text: str) -> str:
        if not os.path.isfile(text):
            why = "is a directory, not a file" if os.path.isdir(text) else "no such file"
            raise argparse.ArgumentTypeError(f"{text!r}: {why}")
        return text


class NewFile:
    """An argument type: a file to write, in a directory that exists."""

    __name__ = "path"

    def __call__(self, text: str) -> str:
        folder = os.path.dirname(text) or "."
        if not text or os.path.isdir(text) or not os.path.isdir(folder):
            why = "is a directory" if text and os.path.isdir(text) else f"no such directory {folder!r}"
            raise argparse.ArgumentTypeError(f"{text!r}: cannot write a file there ({why})")
        return text
