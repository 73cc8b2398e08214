# The v3 agent is stateless: its state travels with each request, signed (see agent/). No tables.
