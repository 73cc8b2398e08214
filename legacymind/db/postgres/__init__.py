"""The project's PostgreSQL backend (``ENGINE = "legacymind.db.postgres"``): Django's own, with a
connection health check that costs no round trip (``base.py``)."""
