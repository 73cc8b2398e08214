"""The think pipeline (specs/002): parameters, mode selection, continuity, memory injection,
hypothesis verification, cognitive frameworks and the atomic write. ``thoughts.services``
runs it; nothing here is called from a view directly."""
