"""The database: the embedded Postgres server and the Django backend on top of it."""
