"""The model: one small function per derived column (``columns``), evaluated over the plan's cross
product (``plan``, ``evaluate``) into the scenario frame, and the one rule that picks an option
(``rule``). It reads validated ``Inputs``; it knows nothing of files or formats."""
