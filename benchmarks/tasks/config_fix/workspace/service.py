import json
from pathlib import Path


def load():
    return json.loads(Path("config/settings.json").read_text())


if __name__ == "__main__":
    cfg = load()
    print(f"{cfg['name']} on port {cfg['port']}")
