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
    assert kinds == sorted(["PersistentVolumeClaim", "PersistentVolumeClaim", "RayCluster",
                            "Deployment", "Service", "ConfigMap", "RayJob"]
                           + ["NetworkPolicy"] * 3)


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


def _claims_of(pod: dict) -> dict[str, str]:
    """Mount path -> claim name of a pod's first container."""
    volumes = {v["name"]: v["persistentVolumeClaim"]["claimName"]
               for v in pod.get("volumes", []) if "persistentVolumeClaim" in v}
    return {m["mountPath"]: volumes[m["name"]] for m in pod["containers"][0]["volumeMounts"]
            if m["name"] in volumes}


def test_every_claim_exists_and_results_share_one_volume():
    claims = {d["metadata"]["name"]: d for d in _kind("PersistentVolumeClaim")}
    for pod in _pod_specs():
        for volume in pod.get("volumes", []):
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims
    (deployment,) = _kind("Deployment")
    api = deployment["spec"]["template"]["spec"]
    results = {e["name"]: e.get("value") for e in api["containers"][0]["env"]}[
        "MEEPLELAB_RESULTS"]
    (where,) = [m for m in _claims_of(api) if results.startswith(m + "/")]
    claim = _claims_of(api)[where]
    assert "ReadWriteMany" in claims[claim]["spec"]["accessModes"]
    for pod in _pod_specs():  # every Ray pod writes results to the same claim
        assert _claims_of(pod).get(where) == claim, pod["containers"][0]["name"]


def test_the_registry_is_on_a_read_write_once_volume_of_the_single_api_pod():
    """SQLite in WAL mode needs a local file system: the registry's claim is ReadWriteOnce,
    mounted by the API pod only (one replica, Recreate), and no Ray pod mounts it."""
    (deployment,) = _kind("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    mounts = _claims_of(pod)
    (where,) = [m for m in mounts if env["MEEPLELAB_DB"].startswith(m + "/")]
    claim = next(d for d in _kind("PersistentVolumeClaim")
                 if d["metadata"]["name"] == mounts[where])
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"]["type"] == "Recreate"
    for other in _pod_specs()[1:]:
        assert mounts[where] not in _claims_of(other).values()
    assert not env["MEEPLELAB_RESULTS"].startswith(where + "/")


# ---- the `restricted` Pod Security profile (Kubernetes Pod Security Standards, v1.30) -----
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}


def restricted_violations(pod: dict) -> list[str]:
    """What of a pod spec the `restricted` Pod Security profile refuses (its baseline
    controls included), one sentence each; [] for a pod the profile admits."""
    found = []
    context = pod.get("securityContext", {})
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag):
            found.append(f"{flag} is on")
    for volume in pod.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            found.append(f"volume {volume['name']} is of type {sorted(kinds)}")
    for sysctl in context.get("sysctls", []):
        if sysctl["name"] not in SAFE_SYSCTLS:
            found.append(f"unsafe sysctl {sysctl['name']}")
    if context.get("runAsUser") == 0:
        found.append("the pod runs as uid 0")
    containers = pod.get("containers", []) + pod.get("initContainers", []) + \
        pod.get("ephemeralContainers", [])
    for c in containers:
        own = c.get("securityContext", {})
        name = c["name"]
        if own.get("privileged"):
            found.append(f"{name} is privileged")
        if own.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name} does not set allowPrivilegeEscalation: false")
        if own.get("runAsNonRoot", context.get("runAsNonRoot")) is not True:
            found.append(f"{name} may run as root (runAsNonRoot)")
        if own.get("runAsUser") == 0:
            found.append(f"{name} runs as uid 0")
        seccomp = own.get("seccompProfile", context.get("seccompProfile", {})).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            found.append(f"{name} has seccomp profile {seccomp!r}")
        capabilities = own.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []):
            found.append(f"{name} does not drop ALL capabilities")
        if set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}:
            found.append(f"{name} adds capabilities {capabilities['add']}")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            found.append(f"{name} uses a host port")
        if own.get("procMount", "Default") != "Default":
            found.append(f"{name} has procMount {own['procMount']}")
        selinux = own.get("seLinuxOptions", context.get("seLinuxOptions", {}))
        if selinux.get("user") or selinux.get("role") or selinux.get("type") not in (
                None, "", "container_t", "container_init_t", "container_kvm_t",
                "container_engine_t"):
            found.append(f"{name} sets SELinux options {selinux}")
    return found


def test_the_restricted_check_really_refuses_what_the_profile_refuses():
    good = _pod_specs()[0]
    assert restricted_violations(good) == []
    for change in (lambda p: p["securityContext"].pop("seccompProfile"),
                   lambda p: p["containers"][0]["securityContext"].pop("capabilities"),
                   lambda p: p["containers"][0]["securityContext"].update(
                       allowPrivilegeEscalation=True),
                   lambda p: p.update(hostNetwork=True),
                   lambda p: p["volumes"].append({"name": "h", "hostPath": {"path": "/"}}),
                   lambda p: (p["securityContext"].update(runAsNonRoot=False),
                              p["containers"][0]["securityContext"].pop("runAsNonRoot")),
                   lambda p: p["containers"][0]["securityContext"].update(
                       capabilities={"drop": ["ALL"], "add": ["SYS_ADMIN"]})):
        bad = copy.deepcopy(good)
        change(bad)
        assert restricted_violations(bad), bad


def _autoscaled_heads() -> list[dict]:
    return [c["headGroupSpec"]["template"]["spec"]
            for c in [d["spec"] for d in _kind("RayCluster")] +
            [j["spec"]["rayClusterSpec"] for j in _kind("RayJob")]
            if c.get("enableInTreeAutoscaling")]


def test_every_pod_meets_the_restricted_profile_with_a_read_only_root():
    """Every pod template (API, Ray heads and workers) validates as a Pod and meets the
    `restricted` profile; every container's root file system is read-only (writes go to
    volumes), and only a head that runs KubeRay's autoscaler mounts a service-account
    token; the autoscaler container KubeRay adds gets the same restricted context."""
    for pod in _pod_specs():
        where = pod["containers"][0]["name"]
        _validate_pod_template({"spec": pod}, where)
        assert restricted_violations(pod) == [], where
        for container in pod["containers"]:
            assert container["securityContext"]["readOnlyRootFilesystem"] is True, where
        if pod not in _autoscaled_heads():
            assert pod["automountServiceAccountToken"] is False, where
    for cluster in [d["spec"] for d in _kind("RayCluster")] + \
            [j["spec"]["rayClusterSpec"] for j in _kind("RayJob")]:
        fake = {"containers": [{"name": "autoscaler", "securityContext":
                                cluster["autoscalerOptions"]["securityContext"]}],
                "securityContext": cluster["headGroupSpec"]["template"]["spec"][
                    "securityContext"]}
        assert restricted_violations(fake) == []


# ---- who may reach the Ray pods ------------------------------------------------------------
def _labels_of_pods() -> list[tuple[str, dict]]:
    found = [("api", d["spec"]["template"]["metadata"]["labels"]) for d in _kind("Deployment")]
    for c in [d["spec"] for d in _kind("RayCluster")] + \
            [j["spec"]["rayClusterSpec"] for j in _kind("RayJob")]:
        found.append(("head", c["headGroupSpec"]["template"]["metadata"]["labels"]))
        found += [("worker", g["template"]["metadata"]["labels"])
                  for g in c["workerGroupSpecs"]]
    return found


def _selects(selector: dict, labels: dict) -> bool:
    return selector.get("matchLabels", {}).items() <= labels.items()


def _allowed_sources(policy: dict) -> list[tuple[dict, dict | None, list]]:
    """(podSelector, namespaceSelector, ports) of each source a policy lets in."""
    out = []
    for rule in policy["spec"].get("ingress", []):
        for peer in rule.get("from", [{}]):
            out.append((peer.get("podSelector", {}), peer.get("namespaceSelector"),
                        rule.get("ports", [])))
    return out


def test_network_policies_let_only_the_api_reach_the_ray_head_and_nothing_else_the_workers():
    policies = _kind("NetworkPolicy")
    for doc in policies:
        assert kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    labels = dict((role, l) for role, l in _labels_of_pods())
    for role, pod_labels in _labels_of_pods():  # every pod is covered by a policy
        assert any(_selects(p["spec"]["podSelector"], pod_labels) for p in policies), role
    own = {p["metadata"]["name"]: p for p in policies}
    head, workers = own["meeplelab-ray-head"], own["meeplelab-ray-workers"]
    assert _selects(head["spec"]["podSelector"], labels["head"])
    assert _selects(workers["spec"]["podSelector"], labels["worker"])
    for policy, allowed in ((head, {"api", "worker"}), (workers, {"head", "worker"})):
        assert policy["spec"]["policyTypes"] == ["Ingress"]
        for pods, namespaces, ports in _allowed_sources(policy):
            reached = {r for r, l in labels.items() if pods and _selects(pods, l)}
            if namespaces is None:
                assert pods and reached and reached <= allowed, (policy["metadata"], pods)
            else:  # from other namespaces: the KubeRay operator, on the dashboard's ports
                assert pods["matchLabels"] == {"app.kubernetes.io/name": "kuberay-operator"}
                assert policy is head and {p["port"] for p in ports} == {8265, 52365}
    api = own["meeplelab-api"]
    assert [p["port"] for r in api["spec"]["ingress"] for p in r["ports"]] == [8000]


def test_ray_runs_with_its_own_auth_token_from_a_secret():
    """Every Ray pod and the API (Ray's client) set RAY_AUTH_MODE=token, so that `ray
    start` refuses to run without a token rather than run without auth, and read the token
    from the same Secret's file."""
    secrets = set()
    for pod in _pod_specs():
        (container,) = pod["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env.get("RAY_AUTH_MODE") == "token", container["name"]
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        folder = str(Path(env["RAY_AUTH_TOKEN_PATH"]).parent)
        volume = volumes[mounts[folder]]
        assert volume["secret"].get("optional") is not True
        item = [i for i in volume["secret"]["items"]
                if i["path"] == Path(env["RAY_AUTH_TOKEN_PATH"]).name]
        assert item, container["name"]
        secrets.add((volume["secret"]["secretName"], item[0]["key"]))
    assert len(secrets) == 1


def test_every_image_names_its_registry_and_an_immutable_tag_or_digest():
    from services.settings import VERSION

    images = {c["image"] for pod in _pod_specs() for c in pod["containers"]}
    (image,) = images
    assert re.fullmatch(rf"[a-z0-9.-]+\.[a-z]+/[a-z0-9/_-]+(:{re.escape(VERSION)}|"
                        r"@sha256:[0-9a-f]{64})", image), image


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
    mounts = [m["mountPath"] for m in container["volumeMounts"]]
    assert any(env["MEEPLELAB_DB"].startswith(m + "/") for m in mounts)
    assert any(env["MEEPLELAB_RESULTS"].startswith(m + "/") for m in mounts)
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
    for setting in ("MEEPLELAB_TOKEN", "MEEPLELAB_ADMIN_TOKEN"):
        path = Path(env[setting])
        (tokens,) = [name for name, m in mounts.items() if m["mountPath"] == str(path.parent)]
        assert mounts[tokens]["readOnly"] is True
        secret = volumes[tokens]["secret"]
        assert secret.get("optional") is not True  # no Secret, no pod
        # the file is named by an item: a Secret without that key mounts nothing (no pod),
        # and a missing file would make `meeplelab serve` refuse to start anyway
        assert path.name in [i["path"] for i in secret["items"]], setting
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
