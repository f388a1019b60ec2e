"""The workspace as bytes, in four rooms by idea:

    io/           fd-safe I/O: open, write and copy beneath a folder, never through a link
    fingerprint/  one digest of the tracked files, kept by a stat cache, a walk or the kernel
    restore/      the content-addressed blob store and checkpoints, taken and put back
    git/          the git guard: nothing the harness or a command writes makes git run code

and private.py: whether the workspace folder itself is the person's alone.

Importers name the module they use; no __init__ here imports anything, so naming one stays cheap.
"""
