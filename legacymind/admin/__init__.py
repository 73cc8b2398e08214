"""The admin's shared parts: delete pages that name no private words, URL lookups limited to
what may be filtered, search without private words."""
