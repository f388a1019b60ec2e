"""Where session slots are saved: one folder under the cache dir, named by doctor."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.config import load_settings
from cerveau_tui.stack.cli import doctor_info


def test_doctor_names_the_slot_save_folder_under_the_cache_dir(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
    settings.cache_dir = tmp_path / "cache"
    assert doctor_info(settings)["slot_save_path"] == str(tmp_path / "cache" / "slots")
