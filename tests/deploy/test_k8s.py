"""The Kubernetes manifests: core kinds validated offline against the Kubernetes schemas that
kubernetes-validate ships (strict: unknown fields fail), the KubeRay custom resources checked
structurally (their pod templates validated as Pods), and the references between them."""
import copy
import json
import re
from pathlib import Path

import kubernetes_validate
import pytest
import ray
import yaml

from services.spec import ExperimentSpec

K8S = Path(__file__).resolve().parents[2] / "k8s"
K8S_VERSION = "1.30"


def _documents() -> list[tuple[str, dict]]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        docs += [(path.name, d) for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


DOCS = _documents()
CORE = [(f, d) for f, d in DOCS if not d["apiVersion"].startswith("ray.io")]
RAY = [(f, d) for f, d in DOCS if d["apiVersion"].startswith("ray.io")]


def _kind(kind: str) -> list[dict]:
    return [d for _, d in DOCS if d["kind"] == kind]


def _validate_pod_template(template: dict, where: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "template"},
           "spec": template["spec"]}
    try:
        kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        raise AssertionError(f"{where}: {exc.message}") from None


def test_every_manifest_kind_is_expected():
    kinds = sorted(d["kind"] for _, d in DOCS)
    assert kinds == sorted(["PersistentVolumeClaim", "RayCluster", "Deployment", "Service",
                            "ConfigMap", "RayJob"])


@pytest.mark.parametrize("doc", [d for _, d in CORE], ids=[f"{f}:{d['kind']}" for f, d in CORE])
def test_core_kinds_validate_strictly(doc):
    assert kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_the_validator_really_rejects_bad_manifests():
    """kubernetes-validate works offline here and is strict: a typo fails."""
    deployment = copy.deepcopy(_kind("Deployment")[0])
    deployment["spec"]["replicaz"] = 1
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)
    deployment = copy.deepcopy(_kind("Deployment")[0])
    deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "x"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)


def _check_cluster_spec(spec: dict, where: str) -> None:
    assert spec["rayVersion"] == ray.__version__, f"{where}: rayVersion != installed Ray"
    head = spec["headGroupSpec"]
    assert isinstance(head["rayStartParams"], dict)
    assert all(isinstance(v, str) for v in head["rayStartParams"].values()), where
    _validate_pod_template(head["template"], f"{where} head")
    assert head["template"]["spec"]["containers"][0]["image"]
    groups = spec["workerGroupSpecs"]
    assert groups, f"{where}: no worker group"
    for g in groups:
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", g["groupName"])
        assert 0 <= g["minReplicas"] <= g["replicas"] <= g["maxReplicas"], g["groupName"]
        assert isinstance(g["rayStartParams"], dict)
        assert all(isinstance(v, str) for v in g["rayStartParams"].values())
        _validate_pod_template(g["template"], f"{where} group {g['groupName']}")
    assert spec.get("enableInTreeAutoscaling") is True, f"{where}: autoscaling off"
    assert any(g["maxReplicas"] > g["minReplicas"] for g in groups)


@pytest.mark.parametrize("doc", [d for _, d in RAY], ids=[f"{f}:{d['kind']}" for f, d in RAY])
def test_ray_resources_are_well_formed(doc):
    assert doc["apiVersion"] == "ray.io/v1"
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", doc["metadata"]["name"])
    if doc["kind"] == "RayCluster":
        _check_cluster_spec(doc["spec"], doc["metadata"]["name"])
    else:
        assert doc["kind"] == "RayJob"
        assert doc["spec"]["entrypoint"].startswith("meeplelab run ")
        assert doc["spec"]["shutdownAfterJobFinishes"] is True
        _check_cluster_spec(doc["spec"]["rayClusterSpec"], doc["metadata"]["name"])


def test_rayjob_runs_a_valid_spec_from_its_configmap():
    (job,) = _kind("RayJob")
    (config,) = _kind("ConfigMap")
    args = job["spec"]["entrypoint"].split()
    spec_path = Path(args[2])
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for m in head["containers"][0]["volumeMounts"]}
    volumes = {v["name"]: v for v in head["volumes"]}
    (specs_volume,) = [n for n, v in volumes.items() if "configMap" in v]
    assert volumes[specs_volume]["configMap"]["name"] == config["metadata"]["name"]
    assert str(spec_path.parent) == mounts[specs_volume]
    spec = ExperimentSpec.model_validate(json.loads(config["data"][spec_path.name]))
    assert spec.total_games() > 0
    out = args[args.index("--out") + 1]
    assert any(out.startswith(p) for p in mounts.values()), "results not on a mounted volume"


def _pod_specs() -> list[dict]:
    """Every pod template: the API Deployment's, and the heads and worker groups of the
    RayCluster and the RayJob."""
    pods = [d["spec"]["template"]["spec"] for d in _kind("Deployment")]
    for c in _kind("RayCluster") + [j["spec"]["rayClusterSpec"] for j in _kind("RayJob")]:
        spec = c.get("spec", c)
        pods.append(spec["headGroupSpec"]["template"]["spec"])
        pods += [g["template"]["spec"] for g in spec["workerGroupSpecs"]]
    return pods


def test_every_pod_runs_as_the_image_user_and_may_write_the_shared_volume():
    """The image runs as a numeric non-root USER; every pod (API, Ray heads and workers)
    runs as that user, and its fsGroup is that user's group (useradd gives it a group of the
    same id), so the workers can write results to the shared volume."""
    dockerfile = (K8S.parent / "Dockerfile").read_text()
    (uid,) = [int(u) for u in re.findall(r"^USER\s+(\d+)\s*$", dockerfile, re.M)]
    assert re.search(rf"^RUN useradd .*--uid {uid}\b", dockerfile, re.M)
    for pod in _pod_specs():
        context = pod.get("securityContext", {})
        where = pod["containers"][0]["name"]
        assert context.get("runAsNonRoot") is True, where
        assert context.get("runAsUser") == uid, where
        assert context.get("fsGroup") == uid, where


def test_every_claim_exists_and_results_share_one_volume():
    claims = {d["metadata"]["name"] for d in _kind("PersistentVolumeClaim")}
    for pod in _pod_specs():
        for volume in pod.get("volumes", []):
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims
    (claim,) = _kind("PersistentVolumeClaim")
    assert "ReadWriteMany" in claim["spec"]["accessModes"]


def test_api_deployment_serves_on_all_interfaces_and_reaches_the_cluster():
    (deployment,) = _kind("Deployment")
    (service,) = _kind("Service")
    (cluster,) = _kind("RayCluster")
    pod = deployment["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["command"][:2] == ["meeplelab", "serve"]
    assert container["command"][container["command"].index("--host") + 1] == "0.0.0.0"
    port = int(container["command"][container["command"].index("--port") + 1])
    assert port in [p["containerPort"] for p in container["ports"]]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert set(env) >= {"MEEPLELAB_DB", "MEEPLELAB_RESULTS", "RAY_ADDRESS"}
    assert env["RAY_ADDRESS"] == f"ray://{cluster['metadata']['name']}-head-svc:10001"
    mount = container["volumeMounts"][0]["mountPath"]
    assert env["MEEPLELAB_DB"].startswith(mount) and env["MEEPLELAB_RESULTS"].startswith(mount)
    # SQLite registry: a single replica that is never run twice at once
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"]["type"] == "Recreate"
    # the Service selects the API pods and targets the named port
    labels = pod["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    names = {p["name"] for p in container["ports"]}
    assert all(p["targetPort"] in names for p in service["spec"]["ports"])
    # the workers write results where the API reads them
    worker = cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    assert {"name": "MEEPLELAB_RESULTS", "value": env["MEEPLELAB_RESULTS"]} in worker["env"]


def test_api_reads_its_tokens_from_a_secret_and_probes_health():
    (deployment,) = _kind("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    (tokens,) = [name for name, v in volumes.items() if "secret" in v]
    assert env["MEEPLELAB_TOKEN"].startswith(mounts[tokens]["mountPath"] + "/")
    assert mounts[tokens]["readOnly"] is True
    assert volumes[tokens]["secret"].get("optional") is not True  # no Secret, no pod
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert pod["securityContext"]["runAsNonRoot"] is True


def test_the_probe_paths_exist_in_the_app(tmp_path):
    from fastapi.testclient import TestClient

    from services.app import create_app

    (deployment,) = _kind("Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    app = create_app(db=str(tmp_path / "r.db"), results=str(tmp_path), run_worker=False)
    with TestClient(app) as client:
        for probe in ("readinessProbe", "livenessProbe"):
            assert client.get(container[probe]["httpGet"]["path"]).status_code == 200
