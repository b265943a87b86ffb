# meeplelab: the API, the CLI and the Ray worker image (k8s/*.yaml run it as meeplelab:0.1.0).
#
#   docker build -t meeplelab:0.1.0 .
#
# Stage 1 builds a wheel (the Cython engines compiled with the release flags); stage 2 installs
# it with its dependencies on a slim Python and runs as an unprivileged user.  RAY_VERSION
# must equal `rayVersion` in k8s/raycluster.yaml and k8s/rayjob.yaml (tests/test_dockerfile.py
# checks it): KubeRay's head and workers and the API's Ray client must speak the same Ray.
ARG PYTHON_VERSION=3.11
ARG RAY_VERSION=2.60.0

FROM python:${PYTHON_VERSION}-slim AS build
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

FROM python:${PYTHON_VERSION}-slim AS runtime
ARG RAY_VERSION
RUN useradd --create-home --uid 10001 meeplelab
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
