"""The KG API under ``/api/v1/kg/``."""
