"""The git guard: no command and no harness write leaves code the person's next `git` runs.

What git would take code from, walked by name (snapshot.py) and asked of git itself (view.py);
which settings run a program (config_rules.py), hooks (hooks.py), files git would hang on
(special.py, stall.py); the check and its verdict (guard.py), the walk skipped when the change set
allows (fast.py), the undo of a finding (quarantine.py), and the one guard around every write the
harness makes (change.py).

Importers name the module they use; this file imports nothing.
"""
