# compliance-api: one image for `serve` (the default), `worker` and the one-shot `migrate`. See docs/operate/deploy.md
# ("Containers"). The base is a build argument: any Debian-like image with python3 (3.11 or newer), venv and pip.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# Build: the package and its dependencies into a virtual environment, and the guide it serves at /guide/.
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
RUN python3 -m venv /opt/compliance-api
WORKDIR /src
COPY pyproject.toml README.md CHANGELOG.md mkdocs.yml ./
COPY docs ./docs
COPY compliance_api ./compliance_api
RUN python3 -m venv /opt/docs \
    && /opt/docs/bin/pip install --quiet "mkdocs>=1.6,<2" "mkdocs-material>=9.7,<10" \
    && NO_MKDOCS_2_WARNING=1 /opt/docs/bin/mkdocs build --strict --quiet \
    && /opt/compliance-api/bin/pip install --quiet . \
    && /opt/compliance-api/bin/compliance-api --help >/dev/null

# Run: the environment and the package, as an unprivileged user, in production mode with every check on.
FROM ${PYTHON_IMAGE}
RUN useradd --uid 10001 --user-group --home-dir /var/lib/compliance-api --create-home compliance \
    && install -d -o compliance -g compliance -m 700 /var/lib/compliance-api/keys
COPY --from=build /opt/compliance-api /opt/compliance-api
ENV PATH=/opt/compliance-api/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    COMPLIANCE_DEPLOYMENT=production \
    COMPLIANCE_VAR_DIR=/var/lib/compliance-api \
    COMPLIANCE_SIGNING_KEYS_DIR=/var/lib/compliance-api/keys \
    COMPLIANCE_WEBHOOKS_EMBEDDED_WORKER=false
USER compliance
WORKDIR /var/lib/compliance-api
EXPOSE 8000
# /livez answers without touching the database or Redis (the load balancer's readiness check is /readyz).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python3", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/livez', timeout=2).status != 200)"]
ENTRYPOINT ["compliance-api"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
