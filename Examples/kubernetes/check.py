#!/usr/bin/env python3
"""Checks the sharded-apply examples without a cluster: Examples/kubernetes/*.yaml and Examples/ci/*.yml.

    python3 Examples/kubernetes/check.py [--provision PATH]

`kubectl apply --dry-run=client` needs an API server to map kinds to resources, so it cannot run
here; this script parses every file with yaml.safe_load_all and checks the structure the examples
rely on: every Kubernetes object has apiVersion/kind/metadata.name; Job, pod and container keys
are known fields of batch/v1 and core/v1 (a misspelt key is an error, as `kubectl --validate`
would report); the Indexed Job's PROVISION_SHARD_COUNT equals `completions`; both Jobs use the
same SOURCE_DATE_EPOCH; every `$(VAR)` in a command is defined; volumes, ConfigMaps and claims
are defined; the ConfigMap's job.json is JSON (and valid for `provision validate` with
--provision). The CI files: the shard count matches the matrix / `parallel:`, and the merge job
runs after the shards. Prints one line per problem and exits 1 if there is any. Needs PyYAML.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)
problems = []

# Fields of the batch/v1 and core/v1 types the examples use (Kubernetes API reference, v1.31).
JOB_SPEC = {"activeDeadlineSeconds", "backoffLimit", "backoffLimitPerIndex", "completionMode", "completions",
            "managedBy", "manualSelector", "maxFailedIndexes", "parallelism", "podFailurePolicy",
            "podReplacementPolicy", "selector", "successPolicy", "suspend", "template", "ttlSecondsAfterFinished"}
POD_SPEC = {"activeDeadlineSeconds", "affinity", "automountServiceAccountToken", "containers", "dnsConfig",
            "dnsPolicy", "enableServiceLinks", "hostAliases", "imagePullSecrets", "initContainers", "nodeName",
            "nodeSelector", "priorityClassName", "restartPolicy", "schedulerName", "securityContext",
            "serviceAccountName", "terminationGracePeriodSeconds", "tolerations", "topologySpreadConstraints",
            "volumes"}
CONTAINER = {"args", "command", "env", "envFrom", "image", "imagePullPolicy", "lifecycle", "livenessProbe", "name",
             "ports", "readinessProbe", "resources", "securityContext", "startupProbe", "stdin", "tty",
             "volumeMounts", "workingDir"}
METADATA = {"name", "namespace", "labels", "annotations", "generateName"}
POD_SECURITY = {"fsGroup", "fsGroupChangePolicy", "runAsGroup", "runAsNonRoot", "runAsUser", "seccompProfile",
                "seLinuxOptions", "supplementalGroups", "sysctls"}
ENV_VAR = {"name", "value", "valueFrom"}
MOUNT = {"mountPath", "mountPropagation", "name", "readOnly", "subPath", "subPathExpr"}
PVC_SPEC = {"accessModes", "dataSource", "resources", "selector", "storageClassName", "volumeMode", "volumeName"}
VARIABLE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def problem(where, text):
    problems.append(f"{where}: {text}")


def known(where, mapping, allowed):
    if not isinstance(mapping, dict):
        problem(where, f"expected a mapping, found {type(mapping).__name__}")
        return
    for key in mapping:
        if key not in allowed:
            problem(where, f"unknown field {key!r}")


def load(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return [doc for doc in yaml.safe_load_all(handle) if doc is not None]
    except yaml.YAMLError as error:
        problem(os.path.relpath(path, EXAMPLES), f"not YAML: {error}")
        return []


def env_of(container):
    return {entry.get("name"): entry.get("value") for entry in container.get("env", [])}


def check_job(where, job, objects):
    spec = job.get("spec", {})
    known(f"{where} spec", spec, JOB_SPEC)
    template = spec.get("template", {})
    known(f"{where} template.metadata", template.get("metadata", {}), METADATA)
    pod = template.get("spec", {})
    known(f"{where} pod spec", pod, POD_SPEC)
    known(f"{where} pod securityContext", pod.get("securityContext", {}), POD_SECURITY)
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        problem(where, "a Job's restartPolicy must be Never or OnFailure")
    indexed = spec.get("completionMode") == "Indexed"
    if "backoffLimitPerIndex" in spec and not indexed:
        problem(where, "backoffLimitPerIndex needs completionMode: Indexed")
    if "backoffLimitPerIndex" in spec and pod.get("restartPolicy") != "Never":
        problem(where, "backoffLimitPerIndex needs restartPolicy: Never")
    if indexed and not isinstance(spec.get("completions"), int):
        problem(where, "an Indexed Job needs completions")
    volumes = {volume.get("name"): volume for volume in pod.get("volumes", [])}
    for volume in volumes.values():
        if "configMap" in volume and volume["configMap"].get("name") not in objects.get("ConfigMap", {}):
            problem(where, f"volume {volume['name']}: no ConfigMap {volume['configMap'].get('name')!r}")
        claim = volume.get("persistentVolumeClaim", {}).get("claimName")
        if "persistentVolumeClaim" in volume and claim not in objects.get("PersistentVolumeClaim", {}):
            problem(where, f"volume {volume['name']}: no PersistentVolumeClaim {claim!r}")
    containers = pod.get("containers", [])
    if not containers:
        problem(where, "no containers")
    for container in containers:
        cwhere = f"{where} container {container.get('name')}"
        known(cwhere, container, CONTAINER)
        for entry in container.get("env", []):
            known(f"{cwhere} env", entry, ENV_VAR)
            if ("value" in entry) == ("valueFrom" in entry):
                problem(cwhere, f"env {entry.get('name')}: exactly one of value and valueFrom")
            if "value" in entry and not isinstance(entry["value"], str):
                problem(cwhere, f"env {entry.get('name')}: value must be a string (quote it)")
        for mount in container.get("volumeMounts", []):
            known(f"{cwhere} volumeMounts", mount, MOUNT)
            if mount.get("name") not in volumes:
                problem(cwhere, f"mounts undefined volume {mount.get('name')!r}")
        defined = set(env_of(container)) | ({"JOB_COMPLETION_INDEX"} if indexed else set())
        for word in container.get("command", []) + container.get("args", []):
            for name in VARIABLE.findall(str(word)):
                if name not in defined:
                    problem(cwhere, f"$({name}) is not defined in the container's env")
        env = env_of(container)
        if indexed:
            words = container.get("command", []) + container.get("args", [])
            if env.get("PROVISION_SHARD_COUNT") != str(spec.get("completions")):
                problem(cwhere, f"PROVISION_SHARD_COUNT {env.get('PROVISION_SHARD_COUNT')!r} "
                                f"is not completions {spec.get('completions')}")
            if "--shard" not in words or words[words.index("--shard") + 1] != "auto":
                problem(cwhere, "the shard command should use --shard auto")
            if "--store" not in words or "$(JOB_COMPLETION_INDEX)" not in words[words.index("--store") + 1]:
                problem(cwhere, "each index needs its own --store (with $(JOB_COMPLETION_INDEX))")
    return {env_of(c).get("SOURCE_DATE_EPOCH") for c in containers}


def check_kubernetes(provision):
    objects, jobs = {}, []
    for name in sorted(os.listdir(HERE)):
        if not name.endswith((".yaml", ".yml")):
            continue
        for index, doc in enumerate(load(os.path.join(HERE, name))):
            where = f"kubernetes/{name} #{index + 1}"
            for key in ("apiVersion", "kind", "metadata"):
                if key not in doc:
                    problem(where, f"no {key}")
            known(f"{where} metadata", doc.get("metadata", {}), METADATA)
            kind, api = doc.get("kind"), doc.get("apiVersion")
            expected = {"Job": "batch/v1", "ConfigMap": "v1", "PersistentVolumeClaim": "v1"}.get(kind)
            if expected is None:
                problem(where, f"unexpected kind {kind!r}")
            elif api != expected:
                problem(where, f"{kind} is {expected}, not {api}")
            objects.setdefault(kind, {})[doc.get("metadata", {}).get("name")] = doc
            if kind == "Job":
                jobs.append((where, doc))
            if kind == "PersistentVolumeClaim":
                known(f"{where} spec", doc.get("spec", {}), PVC_SPEC)
            if kind == "ConfigMap":
                for key, value in doc.get("data", {}).items():
                    if key.endswith(".json"):
                        check_job_file(where, key, value, provision)
    epochs = set()
    for where, job in jobs:
        epochs |= check_job(where, job, objects)
    if len(epochs) != 1 or None in epochs:
        problem("kubernetes", f"every Job needs the same SOURCE_DATE_EPOCH, found {sorted(map(str, epochs))}")
    if not any(job["spec"].get("completionMode") == "Indexed" for _, job in jobs):
        problem("kubernetes", "no Indexed Job")


def check_job_file(where, key, text, provision):
    try:
        json.loads(text)
    except ValueError as error:
        problem(where, f"{key} is not JSON: {error}")
        return
    if provision:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            handle.write(text)
        try:
            result = subprocess.run([provision, "validate", "--quiet", handle.name], capture_output=True, text=True)
            if result.returncode != 0:
                problem(where, f"{key}: provision validate exit {result.returncode}: {result.stdout}{result.stderr}")
        finally:
            os.unlink(handle.name)


def check_github(path):
    where = os.path.relpath(path, EXAMPLES)
    docs = load(path)
    if len(docs) != 1:
        return problem(where, "expected one document")
    jobs = docs[0].get("jobs", {})
    shard, merge = jobs.get("shard", {}), jobs.get("merge", {})
    shards = shard.get("strategy", {}).get("matrix", {}).get("shard")
    count = str(docs[0].get("env", {}).get("SHARD_COUNT"))
    if not isinstance(shards, list) or sorted(shards) != list(range(len(shards))) or str(len(shards)) != count:
        problem(where, f"matrix.shard {shards} is not 0…SHARD_COUNT-1 (SHARD_COUNT {count})")
    if "shard" not in (merge.get("needs") if isinstance(merge.get("needs"), list) else [merge.get("needs")]):
        problem(where, "merge does not need shard")
    uses = [step.get("uses", "") for step in merge.get("steps", [])]
    download = [step.get("with", {}) for step in merge.get("steps", [])
                if step.get("uses", "").startswith("actions/download-artifact") and "pattern" in step.get("with", {})]
    if not download or download[0].get("merge-multiple") is not True:
        problem(where, f"merge should download-artifact with pattern and merge-multiple ({uses})")
    text = open(path, encoding="utf-8").read()
    for needle in ("--shard", "provision merge", "GITHUB_STEP_SUMMARY", "actions/upload-artifact"):
        if needle not in text:
            problem(where, f"{needle!r} missing")


def check_gitlab(path):
    where = os.path.relpath(path, EXAMPLES)
    docs = load(path)
    if len(docs) != 1:
        return problem(where, "expected one document")
    pipeline = docs[0]
    shard, merge = pipeline.get("shard", {}), pipeline.get("merge", {})
    if not isinstance(shard.get("parallel"), int) or not 2 <= shard["parallel"] <= 200:
        problem(where, "shard needs parallel: N (2–200)")
    if "shard" not in [need if isinstance(need, str) else need.get("job") for need in merge.get("needs", [])]:
        problem(where, "merge does not need shard")
    stages = pipeline.get("stages", [])
    if shard.get("stage") not in stages or merge.get("stage") not in stages or \
            stages.index(shard["stage"]) >= stages.index(merge["stage"]):
        problem(where, "the merge stage must come after the shard stage")
    script = " ".join(shard.get("script", []))
    if "--shard auto" not in script or "CI_NODE_INDEX" not in script:
        problem(where, "shard should run --shard auto with a store per CI_NODE_INDEX")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--provision", help="also run `provision validate` on the ConfigMap's job file")
    options = parser.parse_args()
    check_kubernetes(options.provision)
    check_github(os.path.join(EXAMPLES, "ci", "github-actions-sharded.yml"))
    check_gitlab(os.path.join(EXAMPLES, "ci", "gitlab-ci-sharded.yml"))
    for name in ("github-actions.yml", "gitlab-ci.yml"):
        load(os.path.join(EXAMPLES, "ci", name))
    for line in problems:
        print(line)
    print(f"check: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
