"""Settings of the `innervoice` app, read from the environment (listed in .env.example)."""

from __future__ import annotations

from legacymind.conf.env import env, env_bool, env_choice, env_float, env_int  # noqa: F401
