"""The v3 FACD engine: functions over pydantic state, with no Django request, database or cache.

What is pure and what is not:

- ``loop.start`` and ``loop.step`` never change their arguments: ``step`` works on a deep copy
  of the state it is given, and returns the new (unsigned) state in its outcome. Inside a turn,
  the helpers (executors, ``write_beliefs``, ``merge``) change that turn's own copy.
- The loop's stop rule and the policy's costs and limits come in as an ``EngineConfig``
  (config.py); the service builds it from settings, ``start``/``step`` do when given none.
- The same state, event and config choose the same action (each turn's random generator is
  seeded from ``state_id`` and ``revision``); new node and action ids are random (uuid4).
- Not pure: the answer model's tuning (answers.py, ``AGENT_ANSWER_*``, ``AGENT_UNSURE_*``,
  ``AGENT_PERSONA_BETA``), the belief update's bounds (``beliefs.recompute``,
  ``AGENT_MAX_STEP_LOGIT``, ``AGENT_LOGIT_CLIP``) and the reported confidence's fit rates
  (confidence.py) are read from settings where they are used; text is embedded by the
  configured provider (``legacymind.providers.embeddings``), memoised in the process per model
  and text; and the distress check (``agent.safety.assess``) may ask a chat model, logs, and
  counts its detections in the metrics.
"""
