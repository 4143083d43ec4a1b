# cardtable REST API: gunicorn + Flask on a slim Python image, as a non-root user.
#   docker build -t cardtable .
#   docker run -p 8000:8000 -e REDIS_URL=redis://redis:6379/0 cardtable
# Without REDIS_URL the container starts an embedded Redis of its own (data in $XDG_DATA_HOME/cardtable;
# mount a volume there to keep it) — fine for a demo, not for production: the service itself keeps no
# state, so run several copies against one Redis (or a Sentinel-managed primary, or a Cluster) behind a
# load balancer. Arguments go to `cardtable serve` (docker run cardtable --workers 4); it listens where
# CARDTABLE_BIND says, and runs one AI worker per core beside it (--ai-workers N). More AI workers, on any
# machine, against the same Redis: docker run -e REDIS_URL=redis://redis:6379/0 cardtable ai-worker
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    CARDTABLE_BIND=0.0.0.0:8000 \
    PROMETHEUS_MULTIPROC_DIR=/tmp/cardtable-metrics \
    XDG_DATA_HOME=/app/data \
    PYTHONPATH=/app

WORKDIR /app
RUN groupadd --system cardtable && useradd --system --gid cardtable --home-dir /app cardtable

COPY pyproject.toml README.md* ./
COPY engine ./engine
COPY ai ./ai
COPY service ./service
COPY cli ./cli
COPY openapi.yaml ./
RUN pip install --no-cache-dir . && mkdir -p "$PROMETHEUS_MULTIPROC_DIR" "$XDG_DATA_HOME" \
    && chown -R cardtable:cardtable /app "$PROMETHEUS_MULTIPROC_DIR"

USER cardtable
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request,sys; \
sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status == 200 else 1)"

# cardtable serve = gunicorn -c service/gunicorn.conf.py + one AI worker per core (embedded Redis only when
# REDIS_URL is unset), after emptying the metrics directory: the workers' files of a previous run would be summed
# into /metrics. `cardtable ai-worker` as the first argument runs an AI worker instead.
ENTRYPOINT ["/bin/sh", "-c", "if [ \"$1\" = ai-worker ]; then exec cardtable \"$@\"; fi; rm -rf \"${PROMETHEUS_MULTIPROC_DIR:?}\" && mkdir -p \"$PROMETHEUS_MULTIPROC_DIR\" && exec cardtable serve \"$@\"", "cardtable"]
