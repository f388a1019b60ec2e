"""Tool calls printed as text, and tools that do not exist.

Small models often print the call instead of making it: a JSON object in the content, Hermes-style
`<tool_call>{...}</tool_call>` markup (sometimes with the closing tag dropped), a ```json fence, or
llama-server's Generic `{"tool_call": {...}}` shape leaking into the answer. Taken as a final
answer, the turn ends having done nothing. Recognised, the call can be run (and the rewrite
disclosed) or the model told how tools are called. Hallucinated tool names get the real list.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

_NAME_KEYS = ("name", "tool", "tool_name", "function", "action")
_ARG_KEYS = ("arguments", "args", "parameters", "params", "input", "action_input", "tool_input")
# Markup whose JSON may use Python quoting, which the plain JSON scan cannot see.
_MARKUP = re.compile(r"<(tool_call|function_call|tool)>\s*", re.I)
_FUNCTION_TAG = re.compile(r"<function=([\w.-]+)>\s*", re.I)
_OBJECT_START = re.compile(r"\{\s*[\"']")


@dataclass
class TextCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    known: bool = False


def _as_dict(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return None
        return decoded if isinstance(decoded, dict) else None
    return None


def _calls_in(obj: Any, tool_names: Collection[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The (name, arguments) pairs an object describes, in any of the shapes models print."""
    if isinstance(obj, list):
        for item in obj:
            yield from _calls_in(item, tool_names)
        return
    if not isinstance(obj, dict):
        return
    for wrapper in ("tool_call", "tool_calls", "function_call"):
        if wrapper in obj and isinstance(obj[wrapper], (dict, list)):
            yield from _calls_in(obj[wrapper], tool_names)
            return
    fn = obj.get("function")
    if isinstance(fn, dict):  # OpenAI's {"type": "function", "function": {...}}
        yield from _calls_in(fn, tool_names)
        return
    name = next(
        (obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str) and obj[k].strip()), None
    )
    if name is None:
        return
    arg_key = next((k for k in _ARG_KEYS if k in obj), None)
    if arg_key is None:
        # `{"name": "myapp", "version": "1.0"}` is a package.json, not a call: without arguments
        # only a bare object naming a real tool counts.
        if name in tool_names and set(obj) <= set(_NAME_KEYS) | {"type", "id"}:
            yield name, {}
        return
    args = _as_dict(obj[arg_key])
    if args is None:
        return
    yield name, args


def _objects(content: str) -> Iterator[tuple[int, Any]]:
    """Every top-level JSON object in the text, with its position."""
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        m = _OBJECT_START.search(content, pos)
        if m is None:
            return
        try:
            obj, end = decoder.raw_decode(content, m.start())
        except (ValueError, RecursionError):
            pos = m.start() + 1
            continue
        yield m.start(), obj
        pos = end


def _balanced(content: str, start: int) -> str | None:
    depth, quote, i = 0, "", start
    while i < len(content):
        c = content[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return content[start : i + 1]
        i += 1
    return None


def _markup_objects(content: str) -> Iterator[tuple[int, Any]]:
    """Python-quoted objects inside <tool_call> markup, and <function=NAME>{args} tags."""
    for m in _MARKUP.finditer(content):
        if content[m.end() : m.end() + 1] != "{":
            continue
        body = _balanced(content, m.end())
        if body is None:
            continue
        try:
            json.loads(body)
            continue  # plain JSON: the JSON scan has it already
        except (ValueError, RecursionError):
            pass
        try:
            yield m.start(), ast.literal_eval(body)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    for m in _FUNCTION_TAG.finditer(content):
        body = _balanced(content, m.end()) if content[m.end() : m.end() + 1] == "{" else "{}"
        args = _as_dict(body) if body else None
        if args is not None:
            yield m.start(), {"name": m.group(1), "arguments": args}


#: A call a model prints as text is small. The scans below are quadratic on hostile text (48 KB of
#: repeated `<tool_call>{` took 6.5 s), and they run after the stream, where no deadline applies.
MAX_SCANNED_CHARS = 64_000


def extract_text_tool_calls(content: str, tool_names: Collection[str]) -> list[TextCall]:
    """Tool calls written in the content of a reply, in the order they appear."""
    if not content or "{" not in content or len(content) > MAX_SCANNED_CHARS:
        return []
    names = set(tool_names)
    calls: list[TextCall] = []
    try:
        found = sorted([*_objects(content), *_markup_objects(content)], key=lambda p: p[0])
        for _, obj in found:
            for name, args in _calls_in(obj, names):
                calls.append(TextCall(name=name, arguments=args, known=name in names))
    except RecursionError:  # `{"path": [[[[...` 100k deep: not a call anyone meant
        return []
    return calls


def how_to_call_tools_message(tool_names: Collection[str]) -> str:
    return (
        "You wrote a tool call as text in your reply. Text is never executed: to use a tool, make "
        "a real tool call through the tool-calling interface, not JSON or <tool_call> markup in "
        f"your message. The tools are: {', '.join(sorted(tool_names))}. If you have finished, "
        "answer in plain words without any JSON."
    )


def closest_tool(name: str, tool_names: Collection[str]) -> str | None:
    names = list(tool_names)
    lowered = {n.lower(): n for n in names}
    matches = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    if matches:
        return lowered[matches[0]]
    # `run_shell_command` -> bash, `open_file` -> read_file: shared words beat spelling.
    words = set(re.split(r"[_\W]+", name.lower())) - {""}
    best = max(names, key=lambda n: len(words & set(n.lower().split("_"))), default=None)
    if best and words & set(best.lower().split("_")):
        return best
    return None


def unknown_tool_message(name: str, tool_names: Collection[str]) -> str:
    guess = closest_tool(name, tool_names)
    hint = f" Did you mean `{guess}`?" if guess else ""
    return (
        f"There is no tool named `{name}`, so nothing ran.{hint} The only tools are: "
        f"{', '.join(sorted(tool_names))}. Call one of them with its parameters."
    )
