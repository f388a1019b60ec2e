"""Reminder sources: hooks that say, before the next model call, what changed mid-session."""
