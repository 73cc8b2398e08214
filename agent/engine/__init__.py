"""The v3 FACD engine: pure functions over pydantic state (no Django request objects)."""
