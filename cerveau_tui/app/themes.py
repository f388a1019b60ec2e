"""Our themes live as TOML files in the top-level `themes/` folder (and optionally the user's
config folder), loaded at start-up and registered next to Textual's own.

Files rather than Python so a person can add a theme without touching the code; a broken file is
skipped with a reason instead of stopping the app, because a typo in a colour must never cost
someone their session.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
from textual.theme import Theme

#: The repository's `themes/` folder (cerveau_tui/app/themes.py -> ../../themes).
BUILTIN_THEMES_DIR = Path(__file__).resolve().parents[2] / "themes"
DEFAULT_THEME = "cerveau-dark"

_COLOUR_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


@dataclass
class ThemeLoad:
    themes: list[Theme]
    problems: list[str]  # "file: reason", shown as a notice at start-up


#: Where a wheel puts the top-level themes/ (pyproject's data-files): <prefix>/share/cerveau/themes.
INSTALLED_THEMES_DIR = Path(sys.prefix) / "share" / "cerveau" / "themes"


def theme_dirs() -> list[Path]:
    ours = BUILTIN_THEMES_DIR if BUILTIN_THEMES_DIR.is_dir() else INSTALLED_THEMES_DIR
    return [ours, Path(platformdirs.user_config_dir("cerveau")) / "themes"]


def theme_from_toml(path: Path) -> Theme:
    """Parse one theme file; raises ValueError naming the problem."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    name = data.get("name") or path.stem
    if "primary" not in data:
        raise ValueError("a theme needs at least `primary`")
    colours: dict[str, Any] = {k: str(data[k]) for k in _COLOUR_FIELDS if k in data}
    variables = {str(k): str(v) for k, v in dict(data.get("variables", {})).items()}
    return Theme(name=str(name), dark=bool(data.get("dark", True)), variables=variables, **colours)


def load_themes(dirs: list[Path] | None = None) -> ThemeLoad:
    themes: list[Theme] = []
    problems: list[str] = []
    for folder in dirs if dirs is not None else theme_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                themes.append(theme_from_toml(path))
            except ValueError as exc:
                problems.append(f"{path}: {exc}")
    if dirs is None and not BUILTIN_THEMES_DIR.is_dir():
        # An install without the repository's themes/ folder: say so rather than silently
        # falling back to Textual's default look.
        problems.append(f"{BUILTIN_THEMES_DIR}: our themes folder is missing; using textual-dark")
    return ThemeLoad(themes, problems)


class ThemeSaver:
    """Keeps the theme the person switched to (palette, keys) in the user config for next time.
    An unwritable config costs the saving, never the switch: `warn` says so in the chat."""

    def __init__(
        self, saved: str, save: Callable[[str, Any], object], warn: Callable[[str], None]
    ) -> None:
        self._saved = saved
        self._save = save
        self._warn = warn

    def __call__(self, theme: Any) -> None:
        name = getattr(theme, "name", str(theme))
        if name == self._saved:
            return
        self._saved = name
        try:
            self._save("theme", name)
        except Exception as exc:  # noqa: BLE001 - any failure to write is only a warning
            self._warn(f"theme not saved: {exc}")
