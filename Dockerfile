# meeplelab: the API, the CLI and the Ray worker image (k8s/*.yaml run it as
# ghcr.io/meeplelab/meeplelab:0.1.0).
#
#   docker build -t ghcr.io/meeplelab/meeplelab:0.1.0 .
#
# The base image is named with its registry and its full version (Python patch release and
# Debian release), never a floating tag; pin it to a digest (BASE=...@sha256:<digest>) for a
# build that must be byte-for-byte repeatable.
#
# Stage 1 builds a wheel (the Cython engines compiled with the release flags); stage 2 installs
# it with its dependencies on a slim Python and runs as an unprivileged user.  RAY_VERSION
# must equal `rayVersion` in k8s/raycluster.yaml and k8s/rayjob.yaml (tests/test_dockerfile.py
# checks it): KubeRay's head and workers and the API's Ray client must speak the same Ray.
ARG BASE=docker.io/library/python:3.11.7-slim-bookworm
ARG RAY_VERSION=2.60.0

FROM ${BASE} AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY core_cy ./core_cy
COPY services ./services
COPY pipelines ./pipelines
COPY dashboards ./dashboards
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM ${BASE} AS runtime
ARG RAY_VERSION
# the data directory exists and belongs to the user: `docker run` works without a volume
RUN useradd --create-home --uid 10001 meeplelab \
    && mkdir -p /data \
    && chown 10001:10001 /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir "ray[default]==${RAY_VERSION}" /wheels/*.whl \
    && rm -rf /wheels
USER 10001
WORKDIR /home/meeplelab
ENV MEEPLELAB_DB=/data/meeplelab.db \
    MEEPLELAB_RESULTS=/data/results \
    PYTHONUNBUFFERED=1
EXPOSE 8000
# Loopback by default; the k8s Deployment passes --host 0.0.0.0 with a token from a Secret.
CMD ["meeplelab", "serve"]
