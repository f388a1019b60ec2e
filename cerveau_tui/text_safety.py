"""Text the person reads, made to show what it holds instead of acting on their terminal.

What a model sends (its replies, the commands it runs, their output) and what a session log
holds reach plain-text output: `cerveau run`, `cerveau sessions`, `cerveau report`. Printed raw,
its escape sequences act on the terminal: OSC 52 (`ESC ] 52 ; c ; ... BEL`) writes the person's
clipboard, `ESC [ 2 J` clears the screen, `ESC [ 1 A ESC [ 2 K` moves up and erases the line that
said what ran, a carriage return overwrites it. `visible` shows every such character as an
escape (`\\x1b`), so the text reads as what was sent and does nothing.

Shown: C0 controls except newline and tab (carriage return and backspace included: both rewrite
what is on screen), DEL, the C1 controls (0x80-0x9f: 0x9b is a one-byte CSI on terminals that
take 8-bit controls), and the Unicode bidirectional controls (they reorder what a line appears to
say: "Trojan Source", CVE-2021-42574). JSON output needs none of this: json.dumps escapes
controls, and a reader of JSON is a program.
"""

from __future__ import annotations

from typing import Any

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
#: The code points shown as escapes (app/terminal_guard.py removes the same at the terminal).
SHOWN = frozenset(
    {
        *(c for c in range(0x20) if c not in (0x09, 0x0A)),
        0x7F,
        *range(0x80, 0xA0),
        *_BIDI,
    }
)
_TABLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in SHOWN}


def visible(text: str) -> str:
    """`text` with its terminal controls shown as escapes; newlines and tabs kept."""
    return text.translate(_TABLE)


def json_visible(line: str) -> str:
    """A JSON text with the controls JSON leaves raw (DEL, C1, bidi: JSON escapes only C0) as
    `\\uXXXX` escapes: the same value to a parser, inert on a terminal that shows the stream.
    Every such character is inside a string (JSON's own syntax is ASCII), where the escape means
    the character itself."""
    return line.translate(_JSON_TABLE)


_JSON_TABLE = {c: f"\\u{c:04x}" for c in SHOWN if c >= 0x7F}


def visible_data(value: Any) -> Any:
    """`value` (an event's payload: dicts, lists, strings) with `visible` on every string in it,
    keys included; a copy, the original untouched (the session log keeps what was sent)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_data(k): visible_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(visible_data(v) for v in value)
    return value


#: Inserted after the `<` of a chat-template marker so the server's tokenizer reads it as text.
WORD_JOINER = "\u2060"
#: The openings of the turn markers chat templates are written with: ChatML and its family
#: (`<|im_start|>`, `<|im_end|>`, `<|endoftext|>`: SmolLM2, Qwen, Phi; Llama 3's
#: `<|start_header_id|>`, `<|eot_id|>`), DeepSeek's full-width bar (`<｜...｜>`), Gemma's
#: `<start_of_turn>`/`<end_of_turn>`.
_MARKER_OPENINGS = ("<|", "<\uff5c", "<start_of_turn", "<end_of_turn")


def inert_markers(text: str) -> str:
    """`text` with every chat-template turn marker broken by a word joiner after its `<`.

    llama-server renders the messages through the model's template and tokenizes the result with
    special tokens parsed, so `<|im_end|>` in a message's content becomes the real end-of-turn
    token (measured on SmolLM2-135M: a tool result gained 1 prompt token for it, not the 7 of its
    text). A tool's output, a file, an MCP server's result could close its own message and open a
    forged `system` or `user` turn. Broken, the same characters are read as text."""
    if "<" not in text:
        return text
    for opening in _MARKER_OPENINGS:
        if opening in text:
            text = text.replace(opening, f"<{WORD_JOINER}{opening[1:]}")
    return text
