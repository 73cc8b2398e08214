# LegacyMind web and worker image: python 3.11, the CPU build of torch, the project, static files.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    # The local embedding model ships in a Python package: never reach for the hub.
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

WORKDIR /app

# torch first, from the CPU index: unpinned, sentence-transformers pulls a multi-GB CUDA build.
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"

# Dependencies in their own layer, so a code change does not reinstall them.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

COPY . .
# Editable, so BASE_DIR (templates/, staticfiles/) stays /app whoever imports the package.
RUN pip install --no-deps -e .

# collectstatic imports the settings: give them throwaway secrets and a database URL so they
# neither refuse to load nor start the embedded Postgres. Nothing connects during the build.
RUN DJANGO_SECRET_KEY=build-only AGENT_STATE_SECRET=build-only \
    DATABASE_URL=postgres://build@127.0.0.1:5432/build \
    python manage.py collectstatic --noinput --verbosity 0

RUN useradd --system --create-home --uid 10001 legacymind \
    && mkdir -p /app/var \
    && chown -R legacymind /app/var
USER legacymind

EXPOSE 8000
# gunicorn.conf.py (in /app): threaded workers; WEB_CONCURRENCY, WEB_THREADS, WEB_TIMEOUT.
CMD ["gunicorn", "--config", "gunicorn.conf.py", "--bind", "0.0.0.0:8000"]
