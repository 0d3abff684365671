"""Every literal keyword of a `Msg(...)` call in mockbroker/ is a field name of some request or response
struct of the schemas: a static net under the encoder's check (protocol/messages.py), which refuses an
unknown key only on the code paths the tests run. Coarse (any struct, any message), so a misspelling that
is another struct's field passes here and is left to the encoder."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from mockbroker.protocol._generated.specs import MESSAGES

ROOT = Path(__file__).resolve().parents[2] / "mockbroker"


def _names(fields: tuple[Any, ...], into: set[str]) -> None:
    for spec in fields:
        into.add(spec[0])
        if spec[8]:
            _names(spec[8], into)


def test_every_msg_keyword_in_mockbroker_is_a_schema_field() -> None:
    known = {"_unknown_tags"}
    for _name, requests, responses in MESSAGES.values():
        for segment in (*requests, *responses):
            _names(segment[3], known)
    calls, unknown = 0, []
    for path in sorted(ROOT.rglob("*.py")):
        if path.is_relative_to(ROOT / "protocol"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Msg":
                calls += 1
                unknown += [f"{path.relative_to(ROOT.parent)}:{node.lineno}: {kw.arg}"
                            for kw in node.keywords if kw.arg is not None and kw.arg not in known]
    assert calls > 100  # the walk found the handlers' answers
    assert unknown == []
