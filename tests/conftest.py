"""Suite-wide settings.

Hypothesis's default 200 ms deadline per example measures the machine, not the code: on a
busy 2-core CI runner one slow example fails a correct property. Timings belong in bench/.
"""

from hypothesis import settings

from tests.pgserver import pg_server, pg_url  # noqa: F401  (fixtures)

settings.register_profile("artoo", deadline=None, print_blob=True)
settings.load_profile("artoo")
