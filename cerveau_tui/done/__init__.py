"""The definition of done: criteria and the check (criteria.py), error ages (errors.py), the
gate's decision (gate.py), the escalation ladder and handoff (ladder.py), near-green checkpoints
(near_green.py), and GateHook (hook.py), which joins them to a turn. Stack-specific parts arrive
as an adapter object (cerveau_tui/adapters); nothing here names a concrete adapter."""
