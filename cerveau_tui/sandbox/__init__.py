"""Enforcement backends (bubblewrap, landlock, none) and the start-up self-check that picks one."""
