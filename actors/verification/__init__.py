"""Verification: what decides whether a criterion holds.

:mod:`.checks` (code checks that read the workspace, with what they observed),
:mod:`.ladder` (the verification ladder: rule rung first, then a model verdict, failing
closed), :mod:`.grounding` (stated values traced to tool results), :mod:`.answers` (the
shapes of model answers, checked by code), :mod:`._consent` (whether the user's request
already consents to a Law 1 action: the Queen's one approval of its own).
"""
