#!/bin/sh
# Hidden check: valid JSON, every value kept.
cd "$1" && python3 -c '
import json
c = json.load(open("config/settings.json"))
assert c == {"name": "inventory", "port": 8080, "debug": False,
             "database": {"url": "sqlite:///inventory.db", "pool": 4},
             "allowed_hosts": ["localhost", "127.0.0.1"]}, c
'
