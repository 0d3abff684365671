"""JSON read with bounds, for text from outside (OAUTHBEARER tokens) and for the broker's own files.

Python's json parser recurses once per nesting level, so `[[[[...]]]]` 100,000 deep ends in a
RecursionError, and it reads `1e999` as infinity and `NaN` as a float. `loads` here refuses all of
that with one exception, JsonLimitError (a ValueError, so callers that already refuse malformed JSON
refuse these too):
- the nesting of arrays and objects is counted first, outside strings, and a text deeper than
  `max_depth` is refused before it is parsed;
- `NaN`, `Infinity`, `-Infinity` and numbers too large for a double are refused;
- a text longer than `max_chars` (when given) is refused unread.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

DEFAULT_MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


class JsonLimitError(ValueError):
    """A JSON text over one of the bounds (depth, size, number range) or not JSON at all."""


def nesting_depth(text: str, limit: int) -> int:
    """How deep arrays and objects nest in `text` (strings skipped); stops counting past `limit`."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> Any:
    raise JsonLimitError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonLimitError(f"number out of range: {text[:40]}")
    return value


def loads(data: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH, max_chars: int | None = None) -> Any:
    """`json.loads` within the bounds above; JsonLimitError (a ValueError) for anything refused."""
    if isinstance(data, bytes):
        try:
            text = data.decode(json.detect_encoding(data))
        except (UnicodeDecodeError, LookupError) as exc:
            raise JsonLimitError(f"not text: {exc}") from None
    else:
        text = data
    if max_chars is not None and len(text) > max_chars:
        raise JsonLimitError(f"longer than {max_chars} characters")
    if nesting_depth(text, max_depth) > max_depth:
        raise JsonLimitError(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except JsonLimitError:
        raise
    except (ValueError, RecursionError) as exc:  # ValueError: JSONDecodeError, an int over 4300 digits
        raise JsonLimitError(str(exc)) from None
