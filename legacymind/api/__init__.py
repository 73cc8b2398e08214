"""The REST API's shared parts: root view, inputs and fields, pagination, parsers, renderers,
schema and throttles."""
