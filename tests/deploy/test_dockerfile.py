"""The container image's Dockerfile, parsed (dockerfile-parse): multi-stage, the engines
built in the build stage, a non-root runtime user, the Ray version of the k8s manifests,
and a .dockerignore that keeps results, registries, build output and secrets out."""
import fnmatch
import re
from pathlib import Path

import yaml
from dockerfile_parse import DockerfileParser

ROOT = Path(__file__).resolve().parents[2]


def _parsed() -> DockerfileParser:
    parser = DockerfileParser(fileobj=open(ROOT / "Dockerfile", "rb"))
    return parser


def _stages(parser) -> list[list[dict]]:
    stages: list[list[dict]] = []
    for instruction in parser.structure:
        if instruction["instruction"] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(instruction)
    return stages


def _ray_versions_of_the_manifests() -> set[str]:
    found = set()
    for path in (ROOT / "k8s").glob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            spec = (doc or {}).get("spec", {})
            for holder in (spec, spec.get("rayClusterSpec", {})):
                if "rayVersion" in holder:
                    found.add(holder["rayVersion"])
    return found


def test_two_stages_the_engines_built_in_the_first():
    stages = _stages(_parsed())
    assert len(stages) == 2
    build, runtime = stages
    assert build[0]["value"].split()[-1].lower() == "build"
    assert any(i["instruction"] == "RUN" and "pip wheel" in i["value"] for i in build)
    assert any(i["instruction"] == "COPY" and i["value"].split()[0] == "core_cy" for i in build)
    copies = [i["value"] for i in runtime if i["instruction"] == "COPY"]
    assert copies == ["--from=build /wheels /wheels"], "the runtime gets the wheel only"
    assert not any("build-essential" in i["value"] for i in runtime)


def test_runs_as_a_non_root_user():
    runtime = _stages(_parsed())[-1]
    users = [i["value"].strip() for i in runtime if i["instruction"] == "USER"]
    assert users and users[-1] not in ("root", "0", "0:0")
    last_user = max(k for k, i in enumerate(runtime) if i["instruction"] == "USER")
    assert all(i["instruction"] != "RUN" for i in runtime[last_user:]), "RUN after USER"


def test_ray_version_equals_the_manifests_ray_version():
    parser = _parsed()
    args = {i["value"].split("=", 1)[0]: i["value"].split("=", 1)[1]
            for i in parser.structure if i["instruction"] == "ARG" and "=" in i["value"]}
    assert _ray_versions_of_the_manifests() == {args["RAY_VERSION"]}
    runtime = _stages(parser)[-1]
    assert any('ray[default]==${RAY_VERSION}' in i["value"] for i in runtime
               if i["instruction"] == "RUN")


def test_the_manifests_run_the_image_of_the_package_version():
    from services.settings import VERSION

    images = set()
    for path in (ROOT / "k8s").glob("*.yaml"):
        images |= {line.split("image:", 1)[1].strip() for line in path.read_text().splitlines()
                   if line.strip().startswith("image:")}
    assert images == {f"{IMAGE}:{VERSION}"}


IMAGE = "ghcr.io/meeplelab/meeplelab"  # an explicit registry: no image taken from a default one


def test_the_base_image_names_its_registry_and_full_version():
    """No floating base: a registry host, the Python patch release and the Debian release
    (or a digest)."""
    parser = _parsed()
    args = {i["value"].split("=", 1)[0]: i["value"].split("=", 1)[1]
            for i in parser.structure if i["instruction"] == "ARG" and "=" in i["value"]}
    bases = {i["value"].split()[0] for i in parser.structure if i["instruction"] == "FROM"}
    assert bases == {"${BASE}"}
    assert re.fullmatch(r"[a-z0-9.-]+\.[a-z]+/[a-z0-9/_-]+(:\d+\.\d+\.\d+-slim-[a-z]+"
                        r"|@sha256:[0-9a-f]{64})", args["BASE"]), args["BASE"]


def test_the_image_creates_its_data_directory_for_its_user():
    """MEEPLELAB_DB and MEEPLELAB_RESULTS live in /data: the image makes it, owned by the
    runtime user, so a `docker run` without a volume can write there."""
    runtime = _stages(_parsed())[-1]
    env = " ".join(i["value"] for i in runtime if i["instruction"] == "ENV")
    assert "MEEPLELAB_DB=/data/" in env and "MEEPLELAB_RESULTS=/data/" in env
    (uid,) = [i["value"].strip() for i in runtime if i["instruction"] == "USER"]
    runs = " ".join(i["value"] for i in runtime if i["instruction"] == "RUN")
    assert re.search(r"mkdir -p /data\b", runs) and f"chown {uid}:{uid} /data" in runs


def test_dockerignore_keeps_local_state_out():
    patterns = [p.strip() for p in (ROOT / ".dockerignore").read_text().splitlines()
                if p.strip() and not p.startswith("#") and not p.startswith("!")]

    def ignored(path: str) -> bool:
        return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path, p.replace("**/", ""))
                   or path.split("/")[0] == p for p in patterns)

    for path in ("results/x/arm=a/shard-000000000000.parquet", "meeplelab.db", ".git",
                 "build", "core_cy/games/maori/engine.c", "tests", "api.token"):
        assert ignored(path), path
    for path in ("core_cy/games/maori/engine.pyx", "services/app.py", "pyproject.toml", "setup.py"):
        assert not ignored(path), path
