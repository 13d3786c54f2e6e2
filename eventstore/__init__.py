"""artoo.eventstore: where it is kept — the EventLog, the MegramStore, the AuditLog."""
