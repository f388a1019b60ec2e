"""The definition of done: criteria and the check (criteria.py), error ages (errors.py), the
gate's decision (gate.py), the escalation ladder and handoff (ladder.py), near-green checkpoints
(near_green.py), polish on green (polish.py), and two hooks that join them to a turn (wire.py
builds both): SealHook (seal.py), which surfaces protected writes and reports the verification
seal, and GateHook (hook.py), which runs the checks and acts on them (outcomes.py) once a
definition of done is in force: written criteria, or the stack's detected check (detected.py;
`[done] gate`, saved by gate_setting.py). Stack-specific parts arrive as an adapter object
(cerveau_tui/adapters); nothing here names a concrete adapter."""
