"""Grading a whole class: one command, resumable, on one machine or on a cluster (Slurm)."""
