"""The definition of done: criteria and the check (criteria.py), error ages (errors.py), the
gate's decision (gate.py), the escalation ladder and handoff (ladder.py), near-green checkpoints
(near_green.py), and two hooks that join them to a turn: SealHook (seal.py), always on, which
surfaces protected writes and reports the verification seal, and GateHook (hook.py), present
when criteria are set, which runs the checks and acts on them (outcomes.py). Stack-specific parts
arrive as an adapter object (cerveau_tui/adapters); nothing here names a concrete adapter."""
