"""The roles: one module per role, each opening with its Job Description (Responsibilities,
Input contract, Output contract, Constraints), its pure logic above the thin actor class.

No role module imports another role module (private helpers of one role — ``_gradient`` of
the GGS, ``_audit_mark`` of the Auditor, ``_judge_rung`` of the Judge — are its own);
:mod:`.roster` declares every role the System starts.
"""
