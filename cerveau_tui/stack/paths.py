"""Where the model stack lives on disk. One layout, used by provisioning, the server supervisor,
the CLI and the tests, so `cerveau stack status` in one terminal sees what the app did in another.

    <cache>/llama-server/<version>-<flaghash>/llama-server    (+ build_info.json)
    <cache>/models/SmolLM2-135M-Instruct.Q4_1.gguf
    <cache>/downloads/                                         sdist and wheel, reused
    <cache>/work/<version>-<flaghash>/                         source + build tree while building
    <cache>/run/server-<pid>.json                              one state file per running server
    <cache>/logs/llama-server-<port>.log
    <cache>/slots/                                             the servers' --slot-save-path
    <cache>/slot-records/<session>.json                        which save is whose (session/slots.py)
    <cache>/last-port                                          the app's own server's last port
    <cache>/locks/provision.lock
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from cerveau_tui.stack.build import BINARY_NAME, MODEL_FILENAME, build_key

# Not Settings fields: read straight from the environment (config.py skips them).
ENV_CACHE_DIR = "CERVEAU_CACHE_DIR"
ENV_LLAMA_SERVER = "CERVEAU_LLAMA_SERVER"


def cache_root(
    settings_cache_dir: Path | str | None = None, environ: dict[str, str] | None = None
) -> Path:
    """Settings.cache_dir, else $CERVEAU_CACHE_DIR, else the platform's user cache dir."""
    if settings_cache_dir:
        return Path(settings_cache_dir).expanduser()
    env = os.environ if environ is None else environ
    if env.get(ENV_CACHE_DIR):
        return Path(env[ENV_CACHE_DIR]).expanduser()
    return Path(platformdirs.user_cache_dir("cerveau"))


@dataclass(frozen=True)
class StackPaths:
    root: Path
    key: str = build_key()

    @property
    def server_dir(self) -> Path:
        return self.root / "llama-server" / self.key

    @property
    def server_binary(self) -> Path:
        return self.server_dir / BINARY_NAME

    @property
    def build_info_file(self) -> Path:
        return self.server_dir / "build_info.json"

    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    @property
    def default_model(self) -> Path:
        return self.models_dir / MODEL_FILENAME

    @property
    def downloads_dir(self) -> Path:
        return self.root / "downloads"

    @property
    def work_dir(self) -> Path:
        return self.root / "work" / self.key

    @property
    def run_dir(self) -> Path:
        return self.root / "run"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def slots_dir(self) -> Path:
        return self.root / "slots"

    @property
    def slot_records_dir(self) -> Path:
        return self.root / "slot-records"

    @property
    def last_port_file(self) -> Path:
        return self.root / "last-port"

    @property
    def lock_file(self) -> Path:
        return self.root / "locks" / "provision.lock"


def stack_paths(settings_cache_dir: Path | str | None = None) -> StackPaths:
    return StackPaths(cache_root(settings_cache_dir))
