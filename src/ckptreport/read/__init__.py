"""Read: the models directory and measured files, validated into ``Inputs`` (``validated``). Every
input is declared once (``inputs``); the YAML schema (``schema``), the strategy table
(``strategies``), quantities and units (``quantity``, ``units``) and provenance follow from the
declarations. Nothing here knows the model's columns."""
