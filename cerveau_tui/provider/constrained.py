"""Constrained action mode: tool calls through a JSON schema instead of the chat template.

Why: the default model's template (SmolLM2) cannot carry tools. llama-server silently DROPS the
`tools` field for it and `tool_choice` forces nothing, so a native request can never come back
with a call. A `response_format` JSON schema is enforced by grammar during sampling, so every reply
is a valid action: `{"tool": NAME, "arguments": {...}}` or `{"answer": "..."}` (measured: 3 of 3
samples valid, see shared/reference/llama-server.md). The history is rewritten to match, since
the template has no tool roles either.

Everything here is pure.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from .grammar_dialect import grammar_schema
from .types import MAX_ARGUMENT_DEPTH, ArgumentsTooDeep, ToolCall, loads_bounded

ACTION_INSTRUCTION = (
    'Reply with one JSON action: {"tool": name, "arguments": {...}} to use a tool, '
    'or {"answer": text} when you are done.'
)


def action_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A `oneOf` over one object per tool (`tool` fixed to its name, `arguments` its parameters
    schema) plus the final answer. Each tool's `$defs` move to the root: a `$ref` such as
    `#/$defs/X` is resolved from the root document, not from where the parameters now sit."""
    defs: dict[str, Any] = {}
    options: list[dict[str, Any]] = []
    for tool in tools:
        params = grammar_schema(
            copy.deepcopy(tool.get("parameters") or {"type": "object", "properties": {}})
        )
        defs.update(params.pop("$defs", {}))
        params.pop("title", None)  # pydantic's class name: noise in the grammar
        options.append(
            {
                "type": "object",
                "properties": {"tool": {"const": tool["name"]}, "arguments": params},
                "required": ["tool", "arguments"],
            }
        )
    options.append(
        {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    )
    schema: dict[str, Any] = {"oneOf": options}
    if defs:
        schema["$defs"] = defs
    return schema


def response_format(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"schema": action_schema(tools)}}


def _same_action(text: str, rendered: str) -> bool:
    try:
        return bool(text) and loads_bounded(text, _ACTION_DEPTH) == json.loads(rendered)
    except ValueError:
        return False


def action_text(name: str, arguments: str) -> str:
    """The JSON a model would have produced for this call, for the rewritten history. Arguments
    that are not JSON (they should never be replayed, but if they are) stay a string so the
    message is still valid JSON."""
    try:
        args: Any = loads_bounded(arguments) if arguments.strip() else {}
    except ValueError:
        args = arguments
    return json.dumps({"tool": name, "arguments": args}, ensure_ascii=False)


def tool_list(tools: list[dict[str, Any]]) -> str:
    """One line per tool, `name(arg, arg?): description`. The server drops `tools` for a template
    that cannot carry them, so without this the model would choose among names it never saw."""
    lines = []
    for t in tools:
        params = t.get("parameters") or {}
        required = set(params.get("required") or [])
        args = ", ".join(p if p in required else f"{p}?" for p in (params.get("properties") or {}))
        lines.append(f"- {t['name']}({args}): {t.get('description', '')}")
    return "Tools:\n" + "\n".join(lines)


def rewrite_history(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """OpenAI-format history -> roles the template knows (system, user, assistant).

    An assistant message with tool calls becomes its action JSON; a `tool` result becomes a user
    message "Result of NAME:". The first system message gains one sentence about the format (the
    schema already constrains; the sentence helps a small model choose sensibly). Deterministic, so
    the prompt prefix stays byte-stable between iterations and the server's cache is reused.
    """
    names_by_id: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    instructed = False
    for msg in messages:
        role = msg.get("role")
        if role == "system" and not instructed:
            out.append(
                {
                    "role": "system",
                    "content": "\n\n".join(
                        x
                        for x in (
                            msg.get("content") or "",
                            tool_list(tools) if tools else "",
                            ACTION_INSTRUCTION,
                        )
                        if x
                    ),
                }
            )
            instructed = True
        elif role == "assistant" and msg.get("tool_calls"):
            texts = []
            for tc in msg["tool_calls"]:
                fn = tc.get("function") or {}
                name = fn.get("name", "")
                names_by_id[tc.get("id", "")] = name
                texts.append(action_text(name, fn.get("arguments") or ""))
            # The action exactly as the model generated it, when the loop kept it: the server's
            # KV cache holds those tokens, and a re-serialised copy (other spacing) would miss.
            verbatim = msg.get("content") or ""
            if len(texts) == 1 and _same_action(verbatim, texts[0]):
                texts = [verbatim]
            out.append({"role": "assistant", "content": "\n".join(texts)})
        elif role == "tool":
            name = msg.get("name") or names_by_id.get(msg.get("tool_call_id", ""), "tool")
            out.append(
                {"role": "user", "content": f"Result of {name}:\n{msg.get('content') or ''}"}
            )
        elif role == "assistant":
            # A plain answer: it was produced as {"answer": ...}; replay it in the same shape so
            # the model sees one consistent format.
            out.append(
                {
                    "role": "assistant",
                    "content": json.dumps({"answer": msg.get("content") or ""}, ensure_ascii=False),
                }
            )
        else:
            out.append({"role": role, "content": msg.get("content") or ""})
    if not instructed:
        out.insert(0, {"role": "system", "content": ACTION_INSTRUCTION})
    return out


_TOOL_NAME = re.compile(r'^\s*\{\s*"tool"\s*:\s*"((?:[^"\\]|\\.)*)"')
_ARGS_START = re.compile(r'"arguments"\s*:\s*')
_ANSWER_START = re.compile(r'^\s*\{\s*"answer"\s*:\s*"')
# The action wraps the arguments in one object more.
_ACTION_DEPTH = MAX_ARGUMENT_DEPTH + 1


def _unfence(body: str) -> str:
    """The text inside a ```json fence, if the whole reply is one. String operations, not a
    regex: `(.*?)\\s*```` backtracks quadratically over a long run of spaces, and the model
    chooses what the reply contains."""
    if len(body) < 6 or not (body.startswith("```") and body.endswith("```")):
        return body
    inner = body[3:-3]
    if inner.startswith("json"):
        inner = inner[4:]
    return inner.strip()


def parse_action(
    text: str,
    finish_reason: str | None,
    new_id: Callable[[], str],
) -> tuple[str, list[ToolCall]]:
    """The reply text -> (answer content, tool calls).

    A reply cut off at the token cap keeps its raw argument text when the tool is recognisable,
    so the loop's truncation guard sees cut-off JSON and says "split the write", rather than the
    call vanishing. A server that ignored the schema (some OpenAI-compatible servers do) gets its
    text treated as a plain answer: honest, nothing invented.
    """
    body = _unfence(text.strip())
    try:
        value = loads_bounded(body, _ACTION_DEPTH)
    except ValueError as exc:
        if finish_reason == "length":
            return _parse_cut(body, finish_reason, new_id)
        if isinstance(exc, ArgumentsTooDeep):
            # Well-formed but too deep to parse safely: still the call the model meant, with
            # its raw arguments, so the loop answers "invalid arguments" and the model retries.
            return _parse_cut(body, finish_reason, new_id, whole=True)
        return text, []
    if isinstance(value, dict) and isinstance(value.get("tool"), str):
        args = value.get("arguments", {})
        return "", [
            ToolCall(
                id=new_id(), name=value["tool"], arguments=json.dumps(args, ensure_ascii=False)
            )
        ]
    if isinstance(value, dict) and "answer" in value:
        answer = value["answer"]
        return (answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)), []
    return text, []


def _parse_cut(
    body: str, finish_reason: str | None, new_id: Callable[[], str], *, whole: bool = False
) -> tuple[str, list[ToolCall]]:
    named = _TOOL_NAME.match(body)
    if named:
        name = json.loads(f'"{named.group(1)}"')
        start = _ARGS_START.search(body, named.end())
        raw_args = body[start.end() :] if start else ""
        if whole and raw_args.endswith("}"):
            raw_args = raw_args[:-1].rstrip()  # the action's own closing brace
        return "", [ToolCall(id=new_id(), name=name, arguments=raw_args)]
    if _ANSWER_START.match(body):
        return AnswerStream().feed(body), []
    return body, []


class AnswerStream:
    """Shows a constrained answer as it streams: given the growing JSON text, yields the newly
    decoded characters of the `answer` string, and nothing at all for a tool call (raw action JSON
    is not something to show a person). Holds back an escape sequence until it is complete.

    Linear in the reply: each fragment is decoded once (only an unfinished escape is carried
    over), because re-decoding the whole text per fragment turned a few-MB reply streamed in
    small pieces into minutes of CPU."""

    # The head `{"answer": "` never needs more than this; past it the reply is not an answer.
    _HEAD_MAX = 256

    def __init__(self) -> None:
        self._head = ""  # the start of the reply, until it is known to be an answer or not
        self._state = "undecided"  # undecided | answer | other | closed
        self._carry = ""  # an escape sequence split across fragments

    def feed(self, fragment: str) -> str:
        if self._state in ("other", "closed"):
            return ""
        if self._state == "undecided":
            self._head = (self._head + fragment).lstrip()
            head = _ANSWER_START.match(self._head)
            if head is None:
                if len(self._head) > self._HEAD_MAX or not _could_open_answer(self._head):
                    self._state = "other"
                return ""
            self._state = "answer"
            fragment, self._head = self._head[head.end() :], ""
        decoded, used, closed = _decode_prefix(self._carry + fragment)
        self._carry = "" if closed else (self._carry + fragment)[used:]
        if closed:
            self._state = "closed"
        return decoded


_ANSWER_PREFIX = '{"answer":"'
_QUOTE_OR_ESCAPE = re.compile(r'["\\]')


def _could_open_answer(head: str) -> bool:
    """Whether `head` (no leading space) may still grow into `{"answer": "`."""
    squeezed = "".join(head.split())
    return _ANSWER_PREFIX.startswith(squeezed[: len(_ANSWER_PREFIX)]) and len(squeezed) < len(
        _ANSWER_PREFIX
    )


def _decode_prefix(s: str) -> tuple[str, int, bool]:
    """Decode a JSON string body up to its closing quote or the last complete character:
    (decoded text, characters consumed, whether the closing quote was reached)."""
    out: list[str] = []
    i = 0
    n = len(s)
    while i < n:
        ch = s[i]
        if ch == '"':
            return "".join(out), i + 1, True
        if ch != "\\":
            # Plain text runs to the next quote or backslash: copied in one slice.
            stop = _QUOTE_OR_ESCAPE.search(s, i)
            j = stop.start() if stop else n
            out.append(s[i:j])
            i = j
            continue
        if i + 1 >= n:
            break
        if s[i + 1] == "u":
            if i + 6 > n:
                break
            try:
                out.append(chr(int(s[i + 2 : i + 6], 16)))
            except ValueError:
                out.append(s[i : i + 6])
            i += 6
            continue
        out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(s[i + 1], s[i + 1]))
        i += 2
    return "".join(out), i, False


_HEAD_CHARS = 200


class ActionProgress:
    """Where a constrained tool call stands as it streams: its name once `{"tool": "NAME"` is
    whole, then how many characters of its arguments arrived and their first few, so a person
    sees `write_file parser.py … 1.4k chars` grow. Linear: only the text before `arguments` is
    ever searched again."""

    _SEARCH_MAX = 512  # past this without `"arguments":` the reply is not a call we can follow

    def __init__(self) -> None:
        self.name = ""
        self.chars = 0
        self.head = ""
        self._before = ""  # the text before the arguments, until they start
        self._state = "name"  # name | args | other

    def feed(self, fragment: str) -> None:
        if not fragment or self._state == "other":
            return
        if self._state == "args":
            self._count(fragment)
            return
        self._before += fragment
        named = _TOOL_NAME.match(self._before)
        if named is None:
            if len(self._before) > self._SEARCH_MAX or not _could_open_tool(self._before):
                self._state = "other"
            return
        start = _ARGS_START.search(self._before, named.end())
        if start is None:
            if len(self._before) > self._SEARCH_MAX:
                self._state = "other"
            return
        try:
            self.name = json.loads(f'"{named.group(1)}"')
        except ValueError:
            self._state = "other"
            return
        self._state = "args"
        rest, self._before = self._before[start.end() :], ""
        self._count(rest)

    def _count(self, text: str) -> None:
        self.chars += len(text)
        if len(self.head) < _HEAD_CHARS:
            self.head = (self.head + text)[:_HEAD_CHARS]


def _could_open_tool(text: str) -> bool:
    squeezed = "".join(text.split())
    prefix = '{"tool":"'
    return squeezed.startswith(prefix) or prefix.startswith(squeezed)
