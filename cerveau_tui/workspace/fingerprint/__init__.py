"""The fingerprint: one digest of the tracked files that changes exactly when their bytes change.

The Fingerprinter (fingerprinter.py) over a stat cache and the walk (stat_cache.py, rules.py);
a file's digest (digest.py, blake3: the blob store's key too); its value, a Snapshot and diffs
(snapshot.py); kept current from the kernel's change set instead of a walk (watch.py,
watch_env.py, live.py).

Importers name the module they use; this file imports nothing.
"""
