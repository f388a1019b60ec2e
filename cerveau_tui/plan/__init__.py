"""Plans: commit_plan's structured steps, checkpoints, and the report every view renders.

Each is imported from its module (models, detect, drift, report, state, hook, persist): importing
the models (the app's first frame does) pulls in neither the workspace's fingerprint nor the loop.
"""
