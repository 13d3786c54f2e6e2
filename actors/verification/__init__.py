"""Verification: what decides whether a criterion holds.

:mod:`.reading` (the Perceiver's reading checked by code, and the criteria code writes
from it), :mod:`.checks` (the checks those criteria carry, with what they observed),
:mod:`.derive` (what a derivation is in the log), :mod:`.proof` (how an answer was
established, and when to ask for a second derivation), :mod:`.ladder` (the verification
ladder: rule rung first, then a model verdict, failing closed), :mod:`.answers` (the
shapes of model answers, checked by code), :mod:`._consent` (whether the user's request
already consents to a Law 1 action: the Queen's one approval of its own). The method is
docs/proof.md.
"""
