# kcat (librdkafka) from Debian, on the same base as the mockbroker image: the producer of the image
# tests' compose stack (docker/compose.host.yaml). Built by scripts/docker-test.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
# Debian's versions of the base's release, not pinned: BASE may be another release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends kcat \
    && rm -rf /var/lib/apt/lists/*
USER 10002:10002
ENTRYPOINT ["kcat"]
