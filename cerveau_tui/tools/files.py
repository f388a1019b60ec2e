"""File tools: read, write, edit, list. The app performs these itself, so their declared paths are
exact and the policy alone decides them.

They run in the harness's process with the person's rights, so run() opens what declare() named
through workspace.io.beneath: no symbolic link is followed at open time, and one swapped in after
the verdict makes the call fail instead of taking it elsewhere. Writes into `.git` or the
workspace's `.cerveau/` are refused here whatever the policy says (base.refuse_state_write),
and every write goes through the workspace's git guard (workspace/git/change): a `.git` check by
name let `write_file` plant a bare repository, an in-tree hook under core.hooksPath or an
included config, which the person's next `git status` ran. A write after which git would find
another repository, run another program or hook is undone, and the model told.
"""

from __future__ import annotations

import difflib
import stat

from pydantic import BaseModel, Field

from ..workspace.fingerprint.digest import hash_bytes
from ..workspace.git.change import guard_for
from ..workspace.io.beneath import atomic_write_beneath, lstat_beneath, read_bytes_beneath
from .args import NonEmpty, PathArg
from .base import (
    NEAREST,
    Declared,
    Target,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    beneath_errors,
    locate,
    no_such,
    refuse_state_write,
    resolve_path,
)
from .ripgrep import find_rg, missing
from .search_rg import Unavailable
from .search_rg import list_files as rg_list_files

MAX_READ_BYTES = 2_000_000
LIST_TIMEOUT_S = 15.0


def unified_diff(rel: str, old: str, new: str) -> str:
    # git's a/ b/ prefixes for workspace paths; an absolute path (outside) is shown as it is.
    a, b = (rel, rel) if rel.startswith("/") else (f"a/{rel}", f"b/{rel}")
    return "".join(
        difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), a, b)
    )


def _read_text(ctx: ToolContext, t: Target) -> str:
    return _decode(t, _read_data(ctx, t))


def _read_data(ctx: ToolContext, t: Target) -> bytes:
    with beneath_errors(t):
        st = lstat_beneath(t.root, t.rel)
        if st is None:
            raise no_such(ctx, t)
        if stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{t.shown} is a directory; use list_files")
        return read_bytes_beneath(t.root, t.rel, MAX_READ_BYTES)


def _decode(t: Target, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise ToolError(f"{t.shown} looks binary ({len(data)} bytes); not shown")
    return data.decode("utf-8", errors="replace")


def _current_text(ctx: ToolContext, path: str) -> tuple[Target, str | None]:
    """The file as the tool will open it, for a preview: no link followed (a dialog showing the
    bytes of a file a link points at outside would leak it to the screen and mislead the person).
    None when it does not exist."""
    target = locate(ctx.workspace, path)
    try:
        return target, read_bytes_beneath(target.root, target.rel, MAX_READ_BYTES).decode(
            "utf-8", "replace"
        )
    except FileNotFoundError:
        return target, None


def _write(ctx: ToolContext, t: Target, text: str) -> str:
    """Write through the git guard; a write it undid is the call's failure, said to the model.
    Returns what the output must add (the guard could not check), or ""."""
    refuse_state_write(t)
    with beneath_errors(t):
        if not t.inside:  # an approved write outside: no repository of this workspace
            atomic_write_beneath(t.root, t.rel, text)
            return ""
        _, verdict = guard_for(ctx.workspace).change(
            [t.path], lambda: atomic_write_beneath(t.root, t.rel, text)
        )
    if verdict:
        raise ToolError(verdict.note(ctx.workspace, f"writing {t.shown}"))
    return f"\n{verdict.unchecked}" if verdict.unchecked else ""


def _note_own_write(ctx: ToolContext, t: Target, text: str, before: bytes | None = None) -> None:
    if t.inside:
        old = hash_bytes(before) if before is not None else None
        ctx.state.record_own_write(t.rel, hash_bytes(text.encode("utf-8")), old)


class ReadFile(Tool):
    name = "read_file"
    description = "Read a text file."

    class Args(BaseModel):
        path: PathArg = Field(description="file path relative to the workspace")

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        return Declared(reads=[resolve_path(ctx.workspace, args.path)])

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        t = locate(ctx.workspace, args.path)
        data = _read_data(ctx, t)
        text = _decode(t, data)
        if t.inside:  # what the changed-on-disk reminder compares against (tools/base.ToolState)
            ctx.state.record_read(t.rel, hash_bytes(data))
        cap = ctx.output_cap
        if len(text) > cap:
            text = (
                text[:cap] + f"\n[... file continues: {len(text) - cap} more characters not shown]"
            )
        return ToolResult(ok=True, output=text)


GLOB_CHARACTERS = "*?["


def refuse_glob_name(path: str) -> None:
    """A path naming a pattern is not written. Found (issue 33): `write_file` given `test_*.py`
    created a file literally named so, which every later glob and shell line then matched or
    tripped on; the model meant a pattern, and nothing said the file was one name."""
    hit = next((c for c in GLOB_CHARACTERS if c in path), None)
    if hit is not None:
        raise ToolError(
            f"refused: `{path}` holds the glob character `{hit}`; write_file writes one file "
            "by its exact name and takes no patterns (name the file, without `*`, `?` or `[`)"
        )


class WriteFile(Tool):
    name = "write_file"
    description = "Create or overwrite a file with the given content."
    mutates = True

    class Args(BaseModel):
        path: PathArg = Field(description="file path relative to the workspace")
        content: str

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        return Declared(writes=[resolve_path(ctx.workspace, args.path)])

    def preview(self, args: Args, ctx: ToolContext) -> str | None:  # type: ignore[override]
        try:
            target, old = _current_text(ctx, args.path)
        except (OSError, ValueError, ToolError):
            return None
        return unified_diff(target.shown, old or "", args.content)

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        refuse_glob_name(args.path)
        t = locate(ctx.workspace, args.path)
        rel = t.shown
        refuse_state_write(t)
        with beneath_errors(t):
            st = lstat_beneath(t.root, t.rel)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ToolError(f"{rel} is a directory")
        existed = st is not None and stat.S_ISREG(st.st_mode)
        old = _read_text(ctx, t) if existed else ""
        unchecked = _write(ctx, t, args.content)
        path = t.path
        ctx.state.record_write(path)
        _note_own_write(ctx, t, args.content)
        n = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
        verb = "overwrote" if existed else "created"
        return ToolResult(
            ok=True,
            output=f"{verb} {rel} ({n} lines, {len(args.content.encode())} bytes){unchecked}",
            diff=unified_diff(rel, old, args.content),
            wrote=[path],
        )


class EditFile(Tool):
    name = "edit_file"
    description = "Replace the exact text `old` with `new` in a file (old must occur once)."
    mutates = True

    class Args(BaseModel):
        path: PathArg
        old: NonEmpty
        new: str

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        p = resolve_path(ctx.workspace, args.path)
        return Declared(reads=[p], writes=[p])

    def preview(self, args: Args, ctx: ToolContext) -> str | None:  # type: ignore[override]
        try:
            target, old = _current_text(ctx, args.path)
        except (OSError, ValueError, ToolError):
            return None
        if old is None:
            return None
        return unified_diff(target.shown, old, old.replace(args.old, args.new, 1))

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        t = locate(ctx.workspace, args.path)
        rel, path = t.shown, t.path
        refuse_state_write(t)
        data = _read_data(ctx, t)
        text = _decode(t, data)
        if args.old == "":
            raise ToolError(
                "`old` is empty; give the exact text to replace (use write_file to create)"
            )
        count = text.count(args.old)
        if count == 0:
            raise ToolError(
                f"`old` text not found in {rel}; read the file and copy the text exactly"
                + _closest_lines(text, args.old)
            )
        if count > 1:
            raise ToolError(
                f"`old` text occurs {count} times in {rel}; include more surrounding lines so it is unique"
            )
        new_text = text.replace(args.old, args.new, 1)
        unchecked = _write(ctx, t, new_text)
        ctx.state.record_write(path)
        _note_own_write(ctx, t, new_text, before=data)
        return ToolResult(
            ok=True,
            output=f"edited {rel}{unchecked}",
            diff=unified_diff(rel, text, new_text),
            wrote=[path],
        )


def _closest_lines(text: str, old: str) -> str:
    """Where `old` nearly is, with line numbers: the file's lines closest to the first line of
    `old` the file does not hold (a typo, a line the model remembered wrong); or, when the file
    holds every line, where the first one is (indentation or order differ). "" when nothing is
    close: a guess is not a way forward."""
    stripped = [ln.strip() for ln in text.splitlines()]
    wanted = [ln.strip() for ln in old.splitlines() if ln.strip()]
    if not wanted:
        return ""
    held = set(stripped)
    first = next((w for w in wanted if w not in held), None)
    if first is None:
        at = stripped.index(wanted[0]) + 1
        return (
            f". Its lines are in the file but not as given (indentation, order): it starts at line "
            f"{at}; read from there and copy the text exactly"
        )
    close = difflib.get_close_matches(first, stripped, n=NEAREST, cutoff=0.6)
    if not close:
        return ""
    shown = [f"{c!r} (line {stripped.index(c) + 1})" for c in close]
    return ". Closest line: " + "; then ".join(shown)


class ListFiles(Tool):
    name = "list_files"
    description = "List files under a directory (default: the workspace root)."

    class Args(BaseModel):
        path: PathArg = "."

    LIMIT = 200

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        return Declared(reads=[resolve_path(ctx.workspace, args.path or ".")])

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        t = locate(ctx.workspace, args.path or ".")
        with beneath_errors(t):
            st = lstat_beneath(t.root, t.rel)
            if st is None:
                raise no_such(ctx, t, "directory")
            if not stat.S_ISDIR(st.st_mode):
                return ToolResult(ok=True, output=t.shown)
            rg = find_rg()
            if rg is None:
                raise ToolError(missing())
            try:
                listed, more = rg_list_files(
                    t.path, t.root, rg=rg, timeout=LIST_TIMEOUT_S, cancel=ctx.cancel,
                    # Outside the workspace the sandbox has no view of the folder: a plain process.
                    runner=ctx.runner if t.inside else None, limit=self.LIMIT,
                )  # fmt: skip
            except Unavailable as exc:
                raise ToolError(f"{t.shown}: could not be listed: {exc}") from exc
        out = ("\n".join(listed) or "(empty)") + (f"\n{more}" if more else "")
        return ToolResult(ok=True, output=out, meta={"engine": "rg"})
