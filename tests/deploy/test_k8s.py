"""The Kubernetes manifests: core kinds validated offline against the Kubernetes schemas that
kubernetes-validate ships (strict: unknown fields fail), the KubeRay custom resources checked
structurally (their pod templates validated as Pods), and the references between them."""
import copy
import ipaddress
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
                           + ["NetworkPolicy"] * 4)


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


def _cluster_specs() -> list[tuple[str, dict]]:
    """(name, RayClusterSpec) of the RayCluster and of the RayJob's own cluster."""
    return [(d["metadata"]["name"], d["spec"]) for d in _kind("RayCluster")] + \
        [(j["metadata"]["name"], j["spec"]["rayClusterSpec"]) for j in _kind("RayJob")]


def test_every_pod_meets_the_restricted_profile_with_a_read_only_root():
    """Every pod template (API, Ray heads and workers) validates as a Pod and meets the
    `restricted` profile; every container's root file system is read-only (writes go to
    volumes); the autoscaler container KubeRay adds gets the same restricted context."""
    for pod in _pod_specs():
        where = pod["containers"][0]["name"]
        _validate_pod_template({"spec": pod}, where)
        assert restricted_violations(pod) == [], where
        for container in pod["containers"]:
            assert container["securityContext"]["readOnlyRootFilesystem"] is True, where
    for _, cluster in _cluster_specs():
        fake = {"containers": [{"name": "autoscaler", "securityContext":
                                cluster["autoscalerOptions"]["securityContext"]}],
                "securityContext": cluster["headGroupSpec"]["template"]["spec"][
                    "securityContext"]}
        assert restricted_violations(fake) == []


def _token_volumes(pod: dict) -> set[str]:
    return {v["name"] for v in pod.get("volumes", []) if any(
        "serviceAccountToken" in s for s in v.get("projected", {}).get("sources", []))}


def service_account_token_holders(pod: dict, autoscaler: dict | None) -> list[str]:
    """Which containers of a pod can read a service-account token: every container when the
    pod automounts one (Kubernetes' default when the field is missing), else those mounting a
    projected serviceAccountToken volume; `autoscaler` is the cluster's autoscalerOptions
    (KubeRay adds that container to an autoscaled head with these mounts)."""
    containers = [(c["name"], c.get("volumeMounts", [])) for c in pod["containers"]]
    if autoscaler is not None:
        containers.append(("autoscaler", autoscaler.get("volumeMounts", [])))
    if pod.get("automountServiceAccountToken", True) is not False:
        return [name for name, _ in containers]
    tokens = _token_volumes(pod)
    return [name for name, mounts in containers if any(m["name"] in tokens for m in mounts)]


def test_no_service_account_token_where_nothing_needs_one():
    """No Ray container, where a Ray task may run, and not the API, can read a
    service-account token: only the autoscaler container of an autoscaled head holds one,
    mounted where Ray's KubeRay autoscaler reads it."""
    from ray.autoscaler._private.kuberay import node_provider

    (deployment,) = _kind("Deployment")
    assert service_account_token_holders(deployment["spec"]["template"]["spec"], None) == []
    for name, cluster in _cluster_specs():
        head = cluster["headGroupSpec"]["template"]["spec"]
        autoscaler = cluster["autoscalerOptions"] if cluster.get(
            "enableInTreeAutoscaling") else None
        assert service_account_token_holders(head, autoscaler) == (
            ["autoscaler"] if autoscaler else []), name
        (mount,) = [m for m in autoscaler["volumeMounts"] if m["name"] in _token_volumes(head)]
        assert Path(node_provider.IN_CLUSTER_TOKEN_PATH).parent == Path(mount["mountPath"])
        assert Path(node_provider.IN_CLUSTER_CA_CERT_PATH).parent == Path(mount["mountPath"])
        (volume,) = [v for v in head["volumes"] if v["name"] == mount["name"]]
        paths = {s.get("serviceAccountToken", {}).get("path") for s in
                 volume["projected"]["sources"]} | {
            i["path"] for s in volume["projected"]["sources"]
            for i in s.get("configMap", s.get("downwardAPI", {})).get("items", [])}
        assert {"token", "ca.crt"} <= paths
        for group in cluster["workerGroupSpecs"]:
            assert service_account_token_holders(group["template"]["spec"], None) == [], name


def test_the_token_check_really_finds_a_mounted_token():
    (_, cluster), *_ = _cluster_specs()
    head = cluster["headGroupSpec"]["template"]["spec"]
    for change in (lambda p: p.update(automountServiceAccountToken=True),
                   lambda p: p.pop("automountServiceAccountToken"),
                   lambda p: p["containers"][0]["volumeMounts"].append(
                       {"name": "kube-api-access", "mountPath": "/x"})):
        bad = copy.deepcopy(head)
        change(bad)
        assert "ray-head" in service_account_token_holders(bad, cluster["autoscalerOptions"])


# ---- who may reach the Ray pods ------------------------------------------------------------
OPERATOR = "operator"


def _labels_of_pods() -> list[tuple[str, dict]]:
    found = [("api", d["spec"]["template"]["metadata"]["labels"]) for d in _kind("Deployment")]
    for _, c in _cluster_specs():
        found.append(("head", c["headGroupSpec"]["template"]["metadata"]["labels"]))
        found += [("worker", g["template"]["metadata"]["labels"])
                  for g in c["workerGroupSpecs"]]
    return found


def _selects(selector: dict, labels: dict) -> bool:
    """A label selector's meaning (matchLabels AND every matchExpression)."""
    tests = {"In": lambda key, values: labels.get(key) in values,
             "NotIn": lambda key, values: labels.get(key) not in values,
             "Exists": lambda key, _: key in labels,
             "DoesNotExist": lambda key, _: key not in labels}
    return selector.get("matchLabels", {}).items() <= labels.items() and all(
        tests[e["operator"]](e["key"], e.get("values", []))
        for e in selector.get("matchExpressions", []))


def _policies_of(role: str) -> list[dict]:
    """Every NetworkPolicy that selects the role's pods (what a pod may do is their union)."""
    labels = dict(_labels_of_pods())[role]
    return [p for p in _kind("NetworkPolicy") if _selects(p["spec"]["podSelector"], labels)]


def _policy_of(role: str) -> dict:
    """The role's own policy: the one that sets its ingress (one per role)."""
    (policy,) = [p for p in _policies_of(role) if "Ingress" in p["spec"]["policyTypes"]]
    return policy


def _roles_of_peer(peer: dict) -> set[str]:
    """Which of our pods (api, head, worker) or the operator a NetworkPolicy peer admits; a
    peer that admits anything else ('any pod', 'any namespace', an ipBlock) is 'anyone'."""
    pods, namespaces = peer.get("podSelector"), peer.get("namespaceSelector")
    if "ipBlock" in peer or (pods is None and namespaces is None):
        return {"anyone"}
    if namespaces is not None:  # pods of another namespace: the operator, pinned twice
        pinned = namespaces.get("matchLabels", {}).get("kubernetes.io/metadata.name") and \
            not namespaces.get("matchExpressions") and pods and \
            pods.get("matchLabels", {}).get("app.kubernetes.io/name") == "kuberay-operator"
        return {OPERATOR} if pinned else {"anyone"}
    if not pods.get("matchLabels") or pods.get("matchExpressions"):
        return {"anyone"}
    return {role for role, labels in _labels_of_pods() if _selects(pods, labels)} or {"nobody"}


def _ports(rule: dict) -> list[int] | None:
    """Every TCP/UDP port a rule opens, None for 'every port'."""
    if not rule.get("ports"):
        return None
    return [n for p in rule["ports"] for n in range(p["port"], p.get("endPort", p["port"]) + 1)]


def head_port_violations(policy: dict) -> list[str]:
    """Where the head's policy admits a pod to a port that pod does not need."""
    need = {10001: {"api"}, 8265: {OPERATOR}}
    for port in _cluster_ports():
        need.setdefault(port, {"head", "worker"})
    found = []
    for rule in policy["spec"].get("ingress", []):
        ports = _ports(rule)
        roles = set().union(*[_roles_of_peer(p) for p in rule.get("from", [{}])])
        if ports is None:
            found.append(f"{sorted(roles)} reach every port")
            continue
        for port in sorted(set(ports)):
            if not roles <= need.get(port, set()):
                found.append(f"{sorted(roles - need.get(port, set()))} reach port {port}")
    return found


def _cluster_ports() -> list[int]:
    """The ports the Ray pods use among themselves, as the clusters fix them; every head and
    worker group fixes the same ones (Ray picks random ports for any not set)."""
    seen = set()
    for name, cluster in _cluster_specs():
        head = cluster["headGroupSpec"]["rayStartParams"]
        assert head["ray-client-server-port"] == "10001" and head["dashboard-port"] == "8265"
        groups = [head] + [g["rayStartParams"] for g in cluster["workerGroupSpecs"]]
        for params in groups:
            fixed = (params["node-manager-port"], params["object-manager-port"],
                     params["min-worker-port"], params["max-worker-port"])
            seen.add((head["port"],) + fixed)
    ((gcs, raylet, objects, low, high),) = seen
    return [int(gcs), int(raylet), int(objects)] + list(range(int(low), int(high) + 1))


def test_each_port_of_the_ray_head_is_open_only_to_the_pods_that_need_it():
    """Ray Client (10001) to the API, the dashboard and its Jobs API (8265, code execution)
    to the KubeRay operator only, the cluster's own ports to the Ray pods only; nothing else
    (the dashboard agent, 52365, included) to anyone; every port that is needed is open to
    the pods that need it."""
    for doc in _kind("NetworkPolicy"):
        assert kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    for role, pod_labels in _labels_of_pods():  # every pod is covered by one policy
        assert _policy_of(role)
    head = _policy_of("head")
    assert head_port_violations(head) == []
    opened = {(role, port) for rule in head["spec"]["ingress"] for port in _ports(rule)
              for peer in rule["from"] for role in _roles_of_peer(peer)}
    assert {("api", 10001), (OPERATOR, 8265)} <= opened
    assert {(role, p) for role in ("head", "worker") for p in _cluster_ports()} <= opened
    workers = _policy_of("worker")
    for rule in workers["spec"]["ingress"]:
        assert set().union(*[_roles_of_peer(p) for p in rule["from"]]) <= {"head", "worker"}
        assert set(_ports(rule)) <= set(_cluster_ports())
    api = _policy_of("api")
    assert [p["port"] for r in api["spec"]["ingress"] for p in r["ports"]] == [8000]


def test_the_operator_is_pinned_by_namespace_and_label():
    """The only peer from another namespace is the KubeRay operator, selected by its
    namespace's name AND its pods' label in one peer (two peers would admit either)."""
    for policy in _kind("NetworkPolicy"):
        for rule in policy["spec"].get("ingress", []):
            for peer in rule.get("from", []):
                if "namespaceSelector" in peer:
                    assert _roles_of_peer(peer) == {OPERATOR}, policy["metadata"]["name"]
                    assert policy is _policy_of("head")


def test_the_port_checks_really_refuse_what_they_should():
    head = _policy_of("head")
    rules = head["spec"]["ingress"]
    op = next(i for i, r in enumerate(rules) if "namespaceSelector" in r["from"][0])
    api = next(i for i, r in enumerate(rules) if _roles_of_peer(r["from"][0]) == {"api"})
    ray = next(i for i, r in enumerate(rules) if _roles_of_peer(r["from"][0]) == {"head"})
    for change in (
            lambda r: r[op]["from"][0].pop("podSelector"),  # any pod of that namespace
            lambda r: r[op]["from"][0].update(namespaceSelector={}),  # that label anywhere
            lambda r: r[op]["from"].append({"podSelector": r[op]["from"][0].pop(
                "podSelector")}),  # namespace OR label: two peers
            lambda r: r[op]["ports"].append({"protocol": "TCP", "port": 52365}),
            lambda r: r[api].pop("ports"),  # the API to every port
            lambda r: r[api]["ports"].append({"protocol": "TCP", "port": 6379}),
            lambda r: r[ray]["from"].append(
                {"podSelector": {"matchLabels": {"app.kubernetes.io/component": "api"}}}),
            lambda r: r.append({"from": [{"podSelector": {}}]})):
        bad = copy.deepcopy(head)
        change(bad["spec"]["ingress"])
        assert head_port_violations(bad), bad


STORE_PORTS = [443]  # HTTPS: S3, GCS and the other stores pyarrow.fs reaches
STORE_MIN_PREFIX = {4: 16, 6: 48}  # an object store's endpoints, not the internet


def store_block_violations(rule: dict) -> list[str]:
    """Where a rule to ipBlocks (addresses outside the cluster: the object store) is wider
    than the object store on HTTPS."""
    found = []
    if sorted(set(_ports(rule) or [])) != STORE_PORTS or \
            any(p.get("protocol", "TCP") != "TCP" for p in rule.get("ports", [])):
        found.append(f"ports {rule.get('ports', 'every port')} to ipBlocks (TCP 443 only)")
    for peer in rule["to"]:
        if set(peer) != {"ipBlock"}:
            found.append(f"{peer} beside the object store's addresses")
            continue
        block = ipaddress.ip_network(peer["ipBlock"]["cidr"])
        if block.prefixlen < STORE_MIN_PREFIX[block.version]:
            found.append(f"{block}: wider than an object store's endpoints")
    return found


DNS = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
       "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}
KUBE_API_PORTS = {443, 6443}


def egress_violations(policy: dict, role: str) -> list[str]:
    """Where a pod's egress goes beyond what it needs: DNS; the API to the head's Ray Client
    port; the Ray pods to each other on the cluster's ports; the autoscaled head to the
    Kubernetes API's ports."""
    if "Egress" not in policy["spec"]["policyTypes"]:
        return ["no egress policy: every destination is allowed"]
    allowed = {"api": {"head": {10001}},
               "head": {"head": set(_cluster_ports()), "worker": set(_cluster_ports())},
               "worker": {"head": set(_cluster_ports()), "worker": set(_cluster_ports())}}[role]
    found = []
    for rule in policy["spec"].get("egress", []):
        ports = _ports(rule)
        if ports is None:
            found.append(f"a rule to every port of {rule.get('to', 'anywhere')}")
            continue
        peers = rule.get("to")
        if peers is None:  # to any address: only the autoscaler's Kubernetes API ports
            if role != "head" or not set(ports) <= KUBE_API_PORTS:
                found.append(f"ports {sorted(set(ports))[:5]} to any address")
            continue
        if any("ipBlock" in peer for peer in peers):  # outside the cluster: the store only
            found += store_block_violations(rule)
            continue
        for peer in peers:
            if peer == DNS:
                if not set(ports) <= {53}:
                    found.append("DNS pods on other ports than 53")
                continue
            for target in _roles_of_peer(peer):
                extra = set(ports) - allowed.get(target, set())
                if extra:
                    found.append(f"to {target} on {sorted(extra)[:5]}")
    return found


def test_egress_of_every_pod_is_limited_to_what_it_needs():
    """Every pod has an egress policy, and it allows DNS, the Ray pods it talks to on the
    ports it uses, and (the autoscaled head only) the Kubernetes API's ports; each pod can
    reach DNS (no egress rule would otherwise leave it unable to resolve the head)."""
    for role in ("api", "head", "worker"):
        for policy in _policies_of(role):
            assert egress_violations(policy, role) == [], (role, policy["metadata"]["name"])
        policy = _policy_of(role)
        assert any(DNS in r.get("to", []) for r in policy["spec"]["egress"]), role
    api = _policy_of("api")
    assert {p for r in api["spec"]["egress"] if DNS not in r["to"] for p in _ports(r)} == \
        {10001}
    bad = copy.deepcopy(_policy_of("worker"))
    bad["spec"]["policyTypes"] = ["Ingress"]
    assert egress_violations(bad, "worker")
    for change in (lambda p: p["spec"]["egress"].append({"to": [{"podSelector": {}}]}),
                   lambda p: p["spec"]["egress"].append({"ports": [{"port": 443}]}),
                   lambda p: p["spec"]["egress"][1]["ports"].append({"port": 8265})):
        bad = copy.deepcopy(_policy_of("worker"))
        change(bad)
        assert egress_violations(bad, "worker"), bad


def test_every_ray_cluster_gets_the_ray_token_as_kuberay_documents():
    """Every RayCluster spec (the RayJob's own too: the operator submits its job over HTTP,
    and without the token that submission gets 401) sets authOptions token mode with the
    Secret the API reads its Ray token from, under KubeRay's key `auth_token`; the operator
    then sets RAY_AUTH_MODE and RAY_AUTH_TOKEN in every Ray container, so no template sets
    its own (a second, different source of the token)."""
    (deployment,) = _kind("Deployment")
    api = deployment["spec"]["template"]["spec"]
    (container,) = api["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["RAY_AUTH_MODE"] == "token"
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    token = Path(env["RAY_AUTH_TOKEN_PATH"])
    volume = {v["name"]: v for v in api["volumes"]}[mounts[str(token.parent)]]
    assert volume["secret"].get("optional") is not True
    (item,) = [i for i in volume["secret"]["items"] if i["path"] == token.name]
    assert item["key"] == "auth_token"
    for job in _kind("RayJob"):
        assert job["spec"]["submissionMode"] in ("HTTPMode", "K8sJobMode", "SidecarMode")
    for name, cluster in _cluster_specs():
        assert cluster.get("authOptions") == {
            "mode": "token", "secretName": volume["secret"]["secretName"]}, name
        pods = [cluster["headGroupSpec"]["template"]["spec"]] + [
            g["template"]["spec"] for g in cluster["workerGroupSpecs"]]
        for pod in pods:
            for c in pod["containers"]:
                assert not {e["name"] for e in c.get("env", [])} & {
                    "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"}, name



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


# ---- the object store ---------------------------------------------------------------------
STORE_FILE = "networkpolicy-object-storage.yaml"


def _store_policy() -> dict:
    (policy,) = [d for f, d in DOCS if f == STORE_FILE]
    return policy


def test_the_pods_that_read_or_write_results_reach_the_object_store_and_nothing_more():
    """With MEEPLELAB_RESULTS on object storage (docs/deployment.md: beyond about 100 nodes)
    the API (manifest, figures), the workers (shards) and the heads (a RayJob's driver) reach
    the store's addresses on HTTPS; the policy that opens it opens nothing else: it is egress
    only (an Ingress type without rules would cut every pod it selects off), to narrow
    ipBlocks, on TCP 443."""
    store = _store_policy()
    assert kubernetes_validate.validate(store, K8S_VERSION, strict=True)
    assert store["spec"]["policyTypes"] == ["Egress"] and "ingress" not in store["spec"]
    assert {role for role, labels in _labels_of_pods()
            if _selects(store["spec"]["podSelector"], labels)} == {"api", "head", "worker"}
    (rule,) = store["spec"]["egress"]
    assert store_block_violations(rule) == []
    blocks = [peer["ipBlock"]["cidr"] for peer in rule["to"]]
    for role in ("api", "head", "worker"):
        reached = [r for p in _policies_of(role) for r in p["spec"]["egress"]
                   if any(peer.get("ipBlock", {}).get("cidr") in blocks
                          for peer in r.get("to", []))]
        assert reached and all(_ports(r) == STORE_PORTS for r in reached), role
    # the operator is told to set the block, and the file is applied with object storage
    text = (K8S.parent / "docs" / "deployment.md").read_text()
    assert f"-f k8s/{STORE_FILE}" in text and "cidr" in text


def test_the_store_check_really_refuses_wider_rules():
    for change in (lambda r: r["to"][0]["ipBlock"].update(cidr="0.0.0.0/0"),
                   lambda r: r["to"][0]["ipBlock"].update(cidr="10.0.0.0/8"),
                   lambda r: r["to"][0]["ipBlock"].update(cidr="::/0"),
                   lambda r: r.pop("ports"),
                   lambda r: r["ports"].append({"protocol": "TCP", "port": 80}),
                   lambda r: r["ports"][0].update(protocol="UDP"),
                   lambda r: r["to"].append({"podSelector": {}})):
        bad = copy.deepcopy(_store_policy())
        change(bad["spec"]["egress"][0])
        assert egress_violations(bad, "worker"), bad
