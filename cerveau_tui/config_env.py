"""The `CERVEAU_*` environment as a settings layer: `CERVEAU_LIMITS__MAX_ITERATIONS=30` is
`limits.max_iterations = 30`. Apart from config.py because it is one idea, read on its own: how a
variable's name becomes a setting's path, and which names are no setting at all.
"""

from __future__ import annotations

import tomllib
from typing import Any

from pydantic import BaseModel

# CERVEAU_* variables that are not Settings fields (read directly by the stack and the tests);
# without this list, exporting one made every load_settings fail with "extra inputs".
_NOT_SETTINGS = frozenset(
    {"CERVEAU_CONFIG", "CERVEAU_CACHE_DIR_HINT", "CERVEAU_LLAMA_SERVER", "CERVEAU_REQUIRE_E2E"}
)


def env_layer(
    environ: dict[str, str], settings: type[BaseModel]
) -> tuple[dict[str, Any], list[str]]:
    """(layer, warnings): CERVEAU_LIMITS__MAX_ITERATIONS=30, a TOML scalar if it parses. A name that is
    no setting is a warning (a stray one made even `cerveau doctor` exit 2); a bad VALUE, an error."""
    layer: dict[str, Any] = {}
    warnings: list[str] = []
    for key, raw in sorted(environ.items()):
        if not key.startswith("CERVEAU_") or key in _NOT_SETTINGS:
            continue
        parts = key[len("CERVEAU_") :].lower().split("__")
        if not _names_a_setting(parts, settings):
            warnings.append(f"ignored {key}: no such setting")
            continue
        try:
            value: Any = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        node = layer
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return layer, warnings


def _names_a_setting(parts: list[str], settings: type[BaseModel]) -> bool:
    """Whether `limits.max_iterations`-style parts name a field (below a dict, the validator judges)."""
    model: Any = settings
    for part in parts:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return True
        if (field := model.model_fields.get(part)) is None:
            return False
        args = [a for a in getattr(field.annotation, "__args__", ()) if isinstance(a, type)]
        model = next((a for a in args if issubclass(a, BaseModel)), field.annotation)
    return True
