"""fd-safe I/O beneath the workspace: opening without following a link (openat.py), atomic writes
and the harness's own state folders (beneath.py), whole-tree copies (copy_beneath.py).

Importers name the module they use; this file imports nothing, so naming one stays cheap.
"""
