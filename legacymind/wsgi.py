from __future__ import annotations

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")
application = get_wsgi_application()

# The local embedding model loads before the first request rather than during it (~10 s).
# Imported here: the providers read settings, which exist once the application is built.
from legacymind.providers import embeddings  # noqa: E402

embeddings.warm_up()

# Everything loaded so far (Django, the apps, DRF, numpy: ~150k objects) lives as long as the
# process. Moved out of the collector's reach, a full collection no longer walks it: measured
# at 100k KG entities, one full collection in 200 think requests took 106 ms of one request.
gc.freeze()
