"""Which assumption moves the answer: one-at-a-time sensitivity (the tornado), the values where the
recommendation flips (break-even), and Monte Carlo over every uncertain input at once.

An input is uncertain when its quantity carries a range (``{value, low, high, distribution}``,
``quantity.Q``). Each uncertain figure of an entity is one ``Param`` (``ranges``): it moves the
input's column in every row that uses that entity (every row of a tier, or of the plan), and the
inputs derived from it when they were omitted (a SKU's node copy rate from its per-GPU rate). The
rows are re-evaluated by the same column definitions as the scenario frame (``evaluator``), and the
option a summary line recommends is picked by the one rule (``rule.rank``), vectorised over draws:
one input at a time (``tornado``), to where the pick flips (``breakeven``), all at once
(``montecarlo``), and what a summary line or a brief says of it (``robustness``).
"""
