"""Text helpers for the blog generator."""


def title_case(text):
    """'hello world' -> 'Hello World'."""
    return " ".join(w.capitalize() for w in text.split())


def truncate(text, width):
    """Cut text to width characters, with an ellipsis when cut."""
    return text if len(text) <= width else text[: width - 1] + "…"
