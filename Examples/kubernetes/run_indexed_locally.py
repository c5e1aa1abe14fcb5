#!/usr/bin/env python3
"""Runs one pod of the Indexed Job in shard-job.yaml on this machine, as Kubernetes would.

    Examples/kubernetes/run_indexed_locally.py INDEX [--mount /jobs=DIR] [--mount /bundle=DIR]
                                                    [--provision PATH] [--dry-run]

The container's command and args are read from the YAML (never copied by hand), its `env` is
set (plain values; `secretKeyRef` values are taken from this environment when set there, and
left out when optional), JOB_COMPLETION_INDEX is set to INDEX as the Job controller does, and
`$(VAR)` references in the command are expanded the way the kubelet expands them (`$$` is a
literal `$`, an undefined `$(VAR)` stays as written). Arguments under a volume's mount path are
mapped to local directories: `--mount /bundle=./bundle`; a ConfigMap volume with no --mount is
written out from bundle-config.yaml into a temporary directory. `--provision PATH` runs that
binary where the command says `provision`.

It prints the command it runs (one line, shell-quoted, secret values as ***) on stderr, then runs it and exits with its
status. Needs PyYAML (Debian: python3-yaml).
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
VARIABLE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc]


def expand(text, env):
    """Kubernetes' $(VAR) expansion for command and args."""
    def replace(match):
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group(0)
    return VARIABLE.sub(replace, text)


def container_env(container):
    env = {}
    for entry in container.get("env", []):
        if "value" in entry:
            env[entry["name"]] = str(entry["value"])
        elif entry["name"] in os.environ:
            env[entry["name"]] = os.environ[entry["name"]]
        elif not entry.get("valueFrom", {}).get("secretKeyRef", {}).get("optional", False):
            sys.exit(f"run_indexed_locally: {entry['name']} comes from {entry.get('valueFrom')}; set it in the environment")
    return env


def mounts(pod, container, given, scratch):
    """Mount path -> local directory, for every volume the container mounts."""
    configmaps = {doc["metadata"]["name"]: doc for doc in load("bundle-config.yaml") if doc["kind"] == "ConfigMap"}
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    table = {}
    for mount in container.get("volumeMounts", []):
        path = mount["mountPath"]
        if path in given:
            table[path] = os.path.abspath(given[path])
            continue
        volume = volumes[mount["name"]]
        if "configMap" in volume:
            directory = os.path.join(scratch, mount["name"])
            os.makedirs(directory, exist_ok=True)
            for key, value in configmaps[volume["configMap"]["name"]].get("data", {}).items():
                with open(os.path.join(directory, key), "w", encoding="utf-8") as handle:
                    handle.write(value)
            table[path] = directory
        else:
            sys.exit(f"run_indexed_locally: give a local directory for {path}: --mount {path}=DIR")
    return table


def remap(argument, table):
    for path in sorted(table, key=len, reverse=True):
        if argument == path or argument.startswith(path.rstrip("/") + "/"):
            return table[path] + argument[len(path.rstrip("/")):]
    return argument


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index", type=int, help="the completion index, 0 to completions-1")
    parser.add_argument("--mount", action="append", default=[], metavar="PATH=DIR",
                        help="a local directory for a mount path of the pod (repeatable)")
    parser.add_argument("--provision", help="the provision binary to run for `provision`")
    parser.add_argument("--yaml", default="shard-job.yaml", help="the Indexed Job (default: shard-job.yaml)")
    parser.add_argument("--dry-run", action="store_true", help="print the command only")
    options = parser.parse_args()

    job = next(doc for doc in load(options.yaml) if doc["kind"] == "Job")
    spec = job["spec"]
    if spec.get("completionMode") != "Indexed":
        sys.exit(f"run_indexed_locally: {options.yaml} is not an Indexed Job")
    if not 0 <= options.index < spec["completions"]:
        sys.exit(f"run_indexed_locally: INDEX must be 0 to {spec['completions'] - 1}")
    pod = spec["template"]["spec"]
    container = pod["containers"][0]

    env = container_env(container)
    env["JOB_COMPLETION_INDEX"] = str(options.index)
    given = dict(item.split("=", 1) for item in options.mount)
    with tempfile.TemporaryDirectory(prefix="indexed-pod-") as scratch:
        table = mounts(pod, container, given, scratch)
        words = [remap(expand(word, env), table) for word in container.get("command", []) + container.get("args", [])]
        if options.provision and words and words[0] == "provision":
            words[0] = options.provision
        secret = {entry["name"] for entry in container.get("env", []) if "valueFrom" in entry}
        shown = " ".join(f"{name}={'***' if name in secret else shlex.quote(value)}" for name, value in sorted(env.items()))
        print(f"{shown} {shlex.join(words)}", file=sys.stderr, flush=True)
        if options.dry_run:
            return 0
        return subprocess.run(words, env={**os.environ, **env}, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
