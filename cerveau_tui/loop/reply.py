"""From one model reply to the ToolExecutions the turn runs: its calls (native, or printed as
text), each validated ONCE and declared, each announced as a `tool_call` event, and the reply
entered into the history in the form the server will accept back."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from .. import protocol as P
from ..history import CallRef, Message
from ..hooks import TurnContext
from ..provider.types import Completion, ToolCall
from ..tools.base import ToolContext, ToolError
from ..tools.registry import Registry
from .dispatch import describe_validation
from .events import TurnEvents
from .guards.cut_retry import CutRetries, CutRetry
from .guards.repetition import Repetition
from .guards.text_calls import extract_text_tool_calls, unknown_tool_message
from .guards.truncation import (
    is_truncated_tool_call,
    looks_truncated,
    wrong_args_message,
)
from .schedule import ToolExecution

#: The least room a call is allowed, whatever the window: tiny test windows still take a file.
MIN_ROOM_TOKENS = 1024
#: The request after a reply cut for repeating itself samples against repeats: llama-server's
#: DRY sampler penalises a sequence that extends an earlier one (other servers ignore the field).
#: A loop at the same prompt and sampling is the same loop again; one line more is not enough.
AFTER_REPETITION: dict[str, Any] = {"dry_multiplier": 0.8}


class Reply:
    def __init__(
        self,
        registry: Registry,
        events: TurnEvents,
        ctx: TurnContext,
        tool_context: Callable[[], ToolContext],
    ) -> None:
        self.registry = registry
        self.events = events
        self.ctx = ctx
        self.tool_context = tool_context
        self.cuts = CutRetries()  # this turn's cut-off calls: the next request must differ

    def calls(self, c: Completion) -> list[ToolCall] | None:
        """The reply's tool calls; [] is an answer. None: the reply printed only tools that do not
        exist, the model was told the real ones, and the round is spent."""
        if c.tool_calls or not c.content:
            return c.tool_calls
        return self._text_calls(c)

    def _text_calls(self, c: Completion) -> list[ToolCall] | None:
        """Tool calls printed as text, executed (and disclosed)."""
        found = extract_text_tool_calls(c.content, self.registry.names())
        if not found:
            return []
        known = [t for t in found if t.known]
        if not known:
            bad = found[0].name
            told = unknown_tool_message(bad, self.registry.names())
            self.events.guard(
                "unknown_tool", f"unknown tool {bad!r} printed as text", self.ctx.iteration, told
            )
            self.ctx.history.append(Message.reply(c.content))
            self.ctx.tell(told)
            return None
        calls = [
            ToolCall("text-" + uuid.uuid4().hex[:8], t.name, json.dumps(t.arguments)) for t in known
        ]
        told = f"executed {len(calls)} tool call(s) the model printed as text: " + ", ".join(
            t.name for t in known
        )
        self.events.guard("text_tool_call", "tool call printed as text", self.ctx.iteration, told)
        self.events.bus.emit(P.NoticePayload(text=told))
        c.content = ""
        return calls

    def executions(self, c: Completion, calls: list[ToolCall]) -> list[ToolExecution]:
        """Validate and declare each call; only calls whose arguments parse enter the history
        (cut-off JSON in history makes the server fail every later request)."""
        if not calls:
            return []
        execs: list[ToolExecution] = []
        cut: list[str] = []
        for i, call in enumerate(calls):
            ex = self._execution(i, call, c, cut)
            if ex is None:
                continue
            execs.append(ex)
            self.events.call(ex, via=c.via)
        # A call to a tool that does not exist goes back with no arguments, as it always has
        # (the bytes of the cached prefix).
        history_calls = [
            CallRef(ex.call_id, ex.name, json.dumps(ex.arguments if ex.tool is not None else {}))
            for ex in execs
        ]
        if history_calls:
            # In constrained mode the action text is kept as generated (when nothing was cut or
            # rewritten) so the provider can replay it verbatim and the server's cache holds.
            content = (
                c.raw
                if c.via == "constrained" and len(history_calls) == len(calls) and not cut
                else c.content
            )
            self.ctx.history.append(Message.reply(content or "", history_calls))
        elif c.content:
            self.ctx.history.append(Message.reply(c.content))
        for told in cut:
            self.ctx.tell(told)
        return execs

    def _oversize(self, call: ToolCall) -> str | None:
        """Why a call is refused unrun because the history could not keep it, or None.

        Found by probing: a 3 MB `write_file` that the reply cap let through was run, then kept
        in the history, so the next request (and every later one) overflowed the server's
        context and the turn ended as an error. A call the window cannot carry is answered with
        the room there is, and enters the history without its arguments."""
        n_ctx = self.ctx.n_ctx
        if not n_ctx:
            return None
        room = max(MIN_ROOM_TOKENS, n_ctx // 2)
        # ~4 characters a token is the low side for code and prose: a call refused here is
        # larger than this whatever the tokenizer says.
        est = len(call.arguments) // 4
        if est <= room:
            return None
        told = (
            f"{call.name} was not run: its arguments are about {est:,} tokens, more than this "
            f"conversation can keep (at most {room:,} of the {n_ctx:,}-token window). Send it in "
            f"parts of at most ~{room * 3:,} characters: write the first part, then extend it "
            "with edit_file."
        )
        self.events.guard(
            "oversize", f"{call.name} arguments ~{est} tokens", self.ctx.iteration, told
        )
        return told

    def _execution(
        self, i: int, call: ToolCall, c: Completion, cut: list[str]
    ) -> ToolExecution | None:
        """One call as an execution; None when its arguments were cut off (said in `cut`)."""
        tool = self.registry.get(call.name)
        if tool is None:
            told = unknown_tool_message(call.name, self.registry.names())
            self.events.guard(
                "unknown_tool", f"unknown tool {call.name!r}", self.ctx.iteration, told
            )
            # The arguments as sent, for the events (a delegated child's refused write names
            # its path from them); the history replays such a call with none (below).
            return ToolExecution(i, call.id, call.name, _sent(call), error=told)
        args: dict[str, Any] = {}
        try:
            args = call.parsed()
            validated = tool.Args.model_validate(args)
            # Well-formed but too large to keep: refused unrun (invalid arguments are told as
            # such first, whatever their size).
            oversize = self._oversize(call)
            if oversize is not None:
                return ToolExecution(i, call.id, call.name, {}, error=oversize, tool=tool)
            ex = ToolExecution(i, call.id, call.name, args, tool=tool, args=validated)
            ex.declared = tool.declare(validated, self.tool_context())
            return ex
        except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError
            if is_truncated_tool_call(finish_reason=c.finish_reason, arguments=call.arguments) or (
                c.finish_reason == "length" and looks_truncated(call.arguments)
            ):
                retry = self.after_cut(call.name)
                cut.append(retry.told)
                return None
            detail = describe_validation(exc) if isinstance(exc, ValidationError) else str(exc)
            told = wrong_args_message(call.name, detail, tool.schema()["parameters"])
            return ToolExecution(i, call.id, call.name, {}, error=told, tool=tool)
        except ToolError as exc:  # a path that cannot be resolved
            return ToolExecution(i, call.id, call.name, args, error=str(exc), tool=tool)

    def after_repetition(self, found: Repetition) -> str:
        """A reply cut for repeating itself (guards/repetition.py): nothing of it ran or enters
        the history; the model is told in one line, and the next request differs (sampled
        against repeats, the line added). Returns what the model was told."""
        shown = found.span.strip()[:60] or repr(found.span[:20])
        told = (
            f"Your last reply was stopped: it repeated the same {len(found.span)} characters "
            f"({shown!r}) {found.times} times, so nothing in it ran. Take a different next step; "
            "if the repetition was meant, generate it (a loop, `* n`) instead of writing it out."
        )
        self.events.guard("repetition", str(found), self.ctx.iteration, told)
        self.events.bus.emit(P.NoticePayload(text=f"reply cut: {found}", source="guard"))
        self.ctx.tell(told)
        self.ctx.request_extra = {**self.ctx.request_extra, **AFTER_REPETITION}
        return told

    def after_cut(self, tool: str) -> CutRetry:
        """A call cut off at the cap: the next request gets a larger cap or a narrower tool
        (guards/cut_retry.py), and the guard event says which."""
        ctx = self.ctx
        retry = self.cuts.after_cut(tool, ctx.max_tokens, ctx.n_ctx, ctx.context_tokens)
        self.events.guard("truncation", retry.reason, self.ctx.iteration, retry.told)
        self.ctx.max_tokens = retry.max_tokens
        return retry


def _sent(call: ToolCall) -> dict[str, Any]:
    """A call's arguments as the model sent them, or none when they do not parse to an object."""
    try:
        args = call.parsed()
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}
