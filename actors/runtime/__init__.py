"""The runtime every role runs on: the write-ahead :mod:`~.bus`, the :mod:`~.role` base with
its typed Equipment, the :mod:`~.runner` that starts and stops roles, the injected
:mod:`~.clock`, the cost :mod:`~.ledger` and the boundary :mod:`~.contracts`.

Nothing here imports a role; roles import this. The flat public names are in
:mod:`artoo.actors`.
"""
