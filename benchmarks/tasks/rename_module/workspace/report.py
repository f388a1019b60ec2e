import helpers


def summary(items):
    return helpers.whisper(f"{len(items)} items")
