"""Verification: what decides whether a criterion holds.

:mod:`.checks` (code checks that read the workspace, with what they observed),
:mod:`.ladder` (the verification ladder: rule rung first, then a model verdict, failing
closed), :mod:`.grounding` (stated values traced to tool results), :mod:`.answers` (the
shapes of model answers, checked by code).
"""
