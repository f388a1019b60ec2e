#!/bin/sh
# Hidden check: the model's own words (its messages, not a tool's output) name disc_area.
python3 - "$2" disc_area <<'PY'
import json, sys
said = ""
for line in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(line)
    if e.get("type") == "assistant_message":
        said += (e.get("payload") or {}).get("content") or ""
sys.exit(0 if sys.argv[2] in said else 1)
PY
