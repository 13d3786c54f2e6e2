"""artoo.actors: who acts — the Bus, the roles, the Dispatcher and the Supervisor."""
