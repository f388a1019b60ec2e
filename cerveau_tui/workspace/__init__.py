"""The workspace as bytes: blake3 fingerprints, a content-addressed store, atomic writes.

Importers name the module they use; this file imports nothing, so naming one stays cheap.
"""
