"""The web edge: sign-in pages, form tokens, the sign-in guard, middleware and ``/healthz``."""
