"""Instant resume: the session's server slot saved at turn end and restored before the request
that needs it, with the server's own figure as the proof.

A provider in front of the session's provider (every request passes here, so the keeper knows
the exact prompt it last sent), and a bus subscriber (a turn's end is when to save):
- At turn end (in a thread: delivery holds the bus lock) and at close, the slot is saved under a
  name that says what it holds (slots.py) and the session's record replaced.
- Before a chat request, when the slot does not hold this conversation (a new process: the app's
  own server died with the last one; or a side request since the save, the turn close's distill),
  the saved slot is restored when its model and prompt prefix match the request.
- The first request after a restore proves it: llama-server can report success and restore
  nothing (llama.cpp#26676), so when its `cache_n` says nothing was reused, that is said once, and
  the session goes on with the full prompt.
- A side conversation on the one slot (a delegated child: `aside`) is bracketed: the slot is
  saved before it and restored after, checked by the parent's next `cache_n` the same way.
  Measured (issue 36): without it each explore cost the parent a re-read of its conversation.
- A server with several slots (`--parallel N`): the session claims one (slot_claim.py), every
  request names it (`id_slot`) and the save and restore act on it.
- A server without the slot endpoints (or no save folder, or every slot claimed) is left alone,
  silently: nothing is saved, nothing said.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..bus import Emitter
from ..config import Settings
from ..loop.cache_ledger import figures_of
from ..protocol import Event, NoticePayload, TurnEnded
from ..provider.llama import LlamaProvider
from ..provider.types import Completion, Provider, ReasoningEnd, ServerProps
from ..stack.paths import stack_paths
from .slot_claim import SlotClaim, claim_slot
from .slots import (
    SlotClient,
    SlotRecord,
    SlotRefused,
    SlotStore,
    model_key,
    prefix_hash,
    slot_filename,
)


class SlotKeeper:
    """A Provider: the session's, with its server slot kept. What it does not keep it passes on."""

    def __init__(
        self,
        inner: Provider,
        *,
        bus: Emitter,
        client: SlotClient,
        store: SlotStore,
        model_key: str,
        workspace: str,
        claim: SlotClaim | None = None,
    ) -> None:
        """`claim`: the slot this session holds on a multi-slot server (slot_claim.py), which its
        requests name; without one, the server's only slot."""
        self.inner, self.bus, self.client, self.store = inner, bus, client, store
        self.claim = claim
        self.base_url = inner.base_url
        self.model_key, self.workspace = model_key, workspace
        # None: the server has no slot to keep (or several, none claimed)
        self.slot = claim.slot if claim is not None else client.slot()
        self._lock = threading.Lock()  # one slot action or request at a time, in order
        self._saver: threading.Thread | None = None
        # The last chat request's prefix, hashed as it was sent (a message changed later in
        # place must not change what the save claims to hold).
        self._sent: tuple[str, int] = ("", 0)
        self._dirty = False  # a request since the last save
        self._ours = False  # the slot holds this conversation (our request was the last one)
        self._restored: int | None = None  # tokens the last restore said it brought back
        self._restored_from = "the saved slot"  # what the next request's cache_n proves
        self._side = 0  # side conversations under way (`aside`): their requests are not ours
        if self.slot is not None:
            bus.subscribe(self._on_event)

    def props(self) -> ServerProps:
        return self.inner.props()

    def tokenize(self, text: str) -> list[int] | None:
        return self.inner.tokenize(text)

    def health(self) -> bool:
        return self.inner.health()

    def resolved_mode(self) -> str:
        return self.inner.resolved_mode()

    def end_reasoning(self) -> ReasoningEnd:
        return self.inner.end_reasoning()

    # --- requests ------------------------------------------------------------------------------

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], **kw: Any
    ) -> Completion:
        self._wait()
        with self._lock:
            if self.slot is not None and not self._ours and not self._side:
                self._restore(messages)
        done = self.inner.complete(messages, tools, **kw)  # the Provider's keywords, as given
        with self._lock:
            if self._side:
                return done  # a child's request: the slot is put back when it ends (`aside`)
            # The prefix without the last message: what every later request of the session
            # opens with, even after a side request that continued the conversation with one
            # message of its own (turn close's distill); a restore needs no more than a prefix.
            kept = messages[:-1]
            self._sent, self._dirty, self._ours = (prefix_hash(kept), len(kept)), True, True
            self._check_restore(done)
        return done

    def complete_json(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], *, max_tokens: int
    ) -> str:
        self._wait()
        with self._lock:
            self._ours = False  # the side request takes the slot; the next chat call restores
        return self.inner.complete_json(messages, schema, max_tokens=max_tokens)

    def _restore(self, messages: list[dict[str, Any]]) -> None:
        rec = self.store.load(self.bus.session_id)
        self._ours = True  # one attempt: a restore that fails is not retried every request
        if rec is None or self.slot is None:
            return
        if rec.model_key != self.model_key:
            self._say("the saved server slot is from another model or build: not restored")
            return
        n = rec.prefix_messages
        if len(messages) < n or prefix_hash(messages[:n]) != rec.prefix_hash:
            self._say("the conversation changed since its server slot was saved: not restored")
            return
        try:
            answer = self.client.act(self.slot, "restore", rec.filename)
        except SlotRefused as exc:
            self._say(f"the saved server slot could not be restored ({exc}); reading it all again")
            return
        restored = answer.get("n_restored")
        self._restored = restored if isinstance(restored, int) else 0

    @contextmanager
    def aside(self) -> Iterator[None]:
        """A side conversation on the session's one slot (a delegated child's requests): the
        slot is saved as the session left it, and restored when the side conversation ends,
        so the session's next request reads only what it appends (its `cache_n` is the proof).
        Nested or concurrent ones share the bracket. Without a slot to keep: nothing done."""
        self._wait()
        with self._lock:
            self._side += 1
            first = self._side == 1
            saved = self._save_aside() if first else None
        try:
            yield
        finally:
            with self._lock:
                self._side -= 1
                if self._side == 0 and saved is not None:
                    self._restore_aside(saved)

    def _save_aside(self) -> str | None:
        if self.slot is None or not self._ours or not self._sent[1]:
            return None
        name = f"{self.bus.session_id}-{self.model_key}-aside.bin"
        try:
            self.client.act(self.slot, "save", name)
        except SlotRefused as exc:
            if exc.unsupported:
                self.slot = None
            else:
                self._say(f"the server slot could not be set aside: {exc}", level="warning")
            return None
        return name

    def _restore_aside(self, name: str) -> None:
        assert self.slot is not None
        try:
            answer = self.client.act(self.slot, "restore", name)
        except SlotRefused as exc:
            self._ours = False  # the next request restores the turn end's save, if it can
            self._say(f"the server slot set aside could not be restored ({exc})", level="warning")
            return
        finally:
            if self.store.is_local(name):
                (self.store.slots_dir / name).unlink(missing_ok=True)
        restored = answer.get("n_restored")
        self._restored = restored if isinstance(restored, int) else 0
        self._restored_from = "the slot set aside before a delegated child ran"

    def _check_restore(self, done: Completion) -> None:
        """The first request after a restore: its `cache_n` is the proof."""
        said, self._restored = self._restored, None
        source, self._restored_from = self._restored_from, "the saved slot"
        if said is None:
            return
        f = figures_of(done)
        if f is None:
            return
        if said and f.cached == 0:
            self._say(
                f"the server said it restored {said:,} tokens of the saved slot, and the request "
                f"reused none: it read all {f.prompt:,} again (llama.cpp#26676)",
                level="warning",
            )
        elif f.cached:
            self._say(f"server cache restored from {source}: {f.cached:,} tokens not read again")

    # --- saving --------------------------------------------------------------------------------

    def _on_event(self, ev: Event) -> None:
        # Never a join here: delivery holds the bus lock, and a saver may be waiting for it to
        # say something. Savers take `_lock` in turn; the next request joins the last one.
        if ev.type == TurnEnded.event_type and self._dirty:
            self._saver = threading.Thread(target=self.save, name="slot-save", daemon=True)
            self._saver.start()

    def _wait(self) -> None:
        saver, self._saver = self._saver, None
        if saver is not None and saver is not threading.current_thread():
            saver.join()

    def save(self) -> None:
        with self._lock:
            if self.slot is None or not self._dirty or not self._ours or not self._sent[1]:
                return
            sid, (prefix, count) = self.bus.session_id, self._sent
            name = slot_filename(sid, self.model_key, prefix)
            try:
                answer = self.client.act(self.slot, "save", name)
            except SlotRefused as exc:
                if exc.unsupported:  # no save folder: left alone, silently, from now on
                    self.slot = None
                else:
                    self._say(f"the server slot could not be saved: {exc}", level="warning")
                return
            self._dirty = False
            saved = answer.get("n_saved")
            self.store.put(
                SlotRecord(
                    session_id=sid,
                    filename=name,
                    model_key=self.model_key,
                    prefix_hash=prefix,
                    prefix_messages=count,
                    n_saved=saved if isinstance(saved, int) else 0,
                    local=self.store.is_local(name),
                    workspace=self.workspace,
                    saved_at=time.time(),
                )
            )

    def close(self) -> None:
        self._wait()
        self.save()
        self.client.close()
        self.inner.close()
        if self.claim is not None:
            self.claim.release()

    def _say(self, text: str, level: str = "info") -> None:
        self.bus.emit(NoticePayload.event_type, {"text": text, "level": level, "source": "slots"})


def keep_slots(
    provider: Provider, bus: Emitter, settings: Settings, props: ServerProps | None
) -> Provider:
    """The session's provider, behind a SlotKeeper when its server answers the slot endpoints
    (one slot, or one of several claimed and pinned); as it was otherwise. Collects old saves
    first (slots.py's rules)."""
    base = provider.base_url
    if not base.startswith(("http://", "https://")):
        return provider
    paths = stack_paths(settings.cache_dir)
    store = SlotStore(paths.slot_records_dir, paths.slots_dir)
    try:
        store.collect()
    except OSError:  # a cache dir we cannot tidy is no reason to refuse the session
        pass
    client = SlotClient(base)
    key = model_key(props.model_path if props else None, props.build_info if props else None)
    ids = client.slot_ids() or []
    claim = None
    if len(ids) > 1 and isinstance(provider, LlamaProvider):
        claim = claim_slot(paths.slots_dir / "claims", client.base, ids)
        if claim is not None:
            provider.id_slot = claim.slot  # every request of the session names it
    keeper = SlotKeeper(
        provider,
        bus=bus,
        client=client,
        store=store,
        model_key=key,
        workspace=str(settings.workspace),
        claim=claim,
    )
    if keeper.slot is None:
        client.close()
        return provider
    return keeper
