"""The floor every stage stands on: errors users read, files read safely, where the shipped inputs
are, progress on long work. Imports nothing of ckptreport above it."""
