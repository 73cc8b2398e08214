"""The journaling agent over HTTP: ``inputs`` validate each body into the typed request its
service takes, ``outputs`` render the answer (and are what the schema documents), ``views``
join the two with one service call and sign the new state for the client."""
