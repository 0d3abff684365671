# A Python Kafka client (confluent-kafka from PyPI) in Debian's python3, on the same base as the
# mockbroker image: the consumer of the image tests' compose stack (docker/compose.host.yaml) runs
# docker/examples/consume.py in it. Built by scripts/docker-test; the CA bundle secret is optional, as in
# docker/Dockerfile.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
# Debian's versions of the base's release, not pinned: BASE may be another release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
RUN --mount=type=secret,id=ca-bundle \
    if [ -f /run/secrets/ca-bundle ]; then export PIP_CERT=/run/secrets/ca-bundle; fi \
    && python3 -m venv /opt/client \
    && /opt/client/bin/pip install --no-cache-dir --disable-pip-version-check 'confluent-kafka>=2.6,<3'
ENV PATH=/opt/client/bin:$PATH PYTHONUNBUFFERED=1
USER 10002:10002
ENTRYPOINT ["python3"]
