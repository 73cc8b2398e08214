"""Importing this package registers every tool (``mcpserver.registry.TOOLS``)."""

from mcpserver.tools import maintenance, memories, memory_server, thinking

__all__ = ["maintenance", "memories", "memory_server", "thinking"]
