"""Restore: the bytes a file had then, and the workspace put back to a point.

A content-addressed blob store keyed by the fingerprint's blake3 (store.py); checkpoints, a
manifest of every tracked file's digest and mode, taken and put back (checkpoints.py), and a
manifest read one entry at a time for the store's collector (manifest_stream.py).

Importers name the module they use; this file imports nothing.
"""
