#!/usr/bin/python3
"""Checks deploy/ against the runtime: test_deploy runs it.

    check_deploy.py SOURCE_DIR DOWNPOUR_BINARY

Kubernetes manifests: Indexed Jobs with headless Services, a TF_CONFIG that
names their pods, TLS files from a Secret, a grace period for the graceful
stop, no variable that works around a default; every pod's environment (and
the TF_CONFIG a TFJob gets) is given to the real binary, which must accept it. systemd units: systemd-analyze verify
(skipped where it is missing), cluster.env accepted by the binary. Dockerfile:
its runtime packages provide every shared library the binary links.
Prints one line per problem and exits 1, or "deploy: ok" and exits 0.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SOURCE, BINARY = sys.argv[1], sys.argv[2]
DEPLOY = os.path.join(SOURCE, "deploy")
problems = []


def problem(text):
    problems.append(text)
    print("deploy: " + text)


def option_names():
    helptext = subprocess.run([BINARY, "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"^  --([a-z0-9-]+)", helptext, re.M))


OPTIONS = option_names()


def check_names(where, env):
    for name in env:
        if name.startswith("DOWNPOUR_"):
            option = name[len("DOWNPOUR_"):].lower().replace("_", "-")
            if option not in OPTIONS:
                problem("%s: %s names no option (--%s)" % (where, name, option))


def accepted(where, env, scratch):
    """The binary parses env completely: `inspect` of a missing file fails with
    exit 1 after the options validated, a bad option exits 2."""
    env = dict(env)
    for name in ("DOWNPOUR_TLS_CA", "DOWNPOUR_TLS_CERT", "DOWNPOUR_TLS_KEY"):
        if name in env:  # the files live in the Secret: stand-ins of the same names
            env[name] = os.path.join(scratch, os.path.basename(env[name]))
            open(env[name], "w").close()
    env["PATH"] = "/usr/bin:/bin"
    r = subprocess.run([BINARY, "inspect", "--checkpoint=" + os.path.join(scratch, "none")],
                       env=env, capture_output=True, text=True)
    if r.returncode != 1 or "config:" in r.stderr:
        problem("%s: the binary refuses the environment: %s" % (where, r.stderr.strip()))


def container_env(container, pod_name, pod_index):
    """The environment Kubernetes gives the container: fieldRefs resolved,
    $(VAR) references to variables defined before expanded."""
    env = {}
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = re.sub(r"\$\(([A-Z_]+)\)", lambda m: env.get(m.group(1), m.group(0)),
                                    str(e["value"]))
        elif "index" in e["valueFrom"]["fieldRef"]["fieldPath"]:
            env[e["name"]] = str(pod_index)
        elif e["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name":
            env[e["name"]] = pod_name
    return env


# Variables that would only paper over a default that does not fit
# Kubernetes: a node listens on all interfaces for a name and waits 300 s for
# its peers under TF_CONFIG by itself.
WORKAROUNDS = ("DOWNPOUR_BIND", "DOWNPOUR_CONNECT_TIMEOUT")


def check_workarounds(where, env):
    for name in WORKAROUNDS:
        if name in env:
            problem("%s: %s works around a default that should fit" % (where, name))


def indexed_pods(job, services):
    """(host, index) of every pod of an Indexed Job: JOB-INDEX.SUBDOMAIN."""
    name, spec = job["metadata"]["name"], job["spec"]
    pod = spec["template"]["spec"]
    if spec.get("completionMode") != "Indexed":
        problem("%s: not an Indexed Job (pods need stable names)" % name)
    if pod.get("restartPolicy") != "OnFailure":
        problem("%s: restartPolicy should be OnFailure (a node that exited 0 stays done)" % name)
    svc = services.get(pod.get("subdomain"))
    if svc is None or svc["spec"].get("clusterIP") != "None":
        problem("%s: subdomain %s is not a headless Service" % (name, pod.get("subdomain")))
    elif svc["spec"]["selector"] != spec["template"]["metadata"]["labels"]:
        problem("%s: the Service's selector does not match the pods" % name)
    if pod.get("terminationGracePeriodSeconds", 30) < 30:
        problem("%s: terminationGracePeriodSeconds below 30 s cuts the graceful stop" % name)
    return [("%s-%d.%s" % (name, i, pod.get("subdomain")), i) for i in range(spec["completions"])]


def check_job(job, services, scratch, hosts):
    name = job["metadata"]["name"]
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    secret_mounts = [m["mountPath"] for m in container.get("volumeMounts", [])
                     for v in pod.get("volumes", []) if v["name"] == m["name"] and "secret" in v]
    for host, i in indexed_pods(job, services):
        env = container_env(container, name + "-%d-x7k2p" % i, i)
        where = "%s pod %d" % (name, i)
        check_names(where, env)
        check_workarounds(where, env)
        try:
            config = json.loads(env.get("TF_CONFIG", ""))
            task = config["task"]
        except (ValueError, KeyError):
            problem("%s: no valid TF_CONFIG" % where)
            continue
        if int(task["index"]) != i:
            problem("%s: TF_CONFIG task.index is not the pod's index" % where)
        hosts.setdefault(task["type"], {})[i] = "%s:%d" % (host, ports["downpour"])
        if env.get("DOWNPOUR_METRICS_PORT") != str(ports.get("metrics")):
            problem("%s: DOWNPOUR_METRICS_PORT is not the metrics port" % where)
        for tls in ("DOWNPOUR_TLS_CA", "DOWNPOUR_TLS_CERT", "DOWNPOUR_TLS_KEY"):
            if not any(env.get(tls, "").startswith(m + "/") for m in secret_mounts):
                problem("%s: %s is not a file of a Secret volume" % (where, tls))
        if host not in env.get("DOWNPOUR_TLS_CERT", ""):
            problem("%s: the certificate is not the pod's own (%s)" % (where, host))
        accepted(where, env, scratch)
        yield config["cluster"]


def check_kubernetes(scratch):
    docs = [d for d in yaml.safe_load_all(open(os.path.join(DEPLOY, "kubernetes", "downpour.yaml")))]
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    if any(d["kind"] == "StatefulSet" for d in docs):
        problem("downpour.yaml: a StatefulSet restarts pods that finished; use Indexed Jobs")
    jobs = [d for d in docs if d["kind"] == "Job"]
    hosts, clusters = {}, []
    for job in jobs:
        clusters += list(check_job(job, services, scratch, hosts))
    actual = {role: [by_index[i] for i in sorted(by_index)] for role, by_index in hosts.items()}
    if sorted(actual) != ["chief", "ps", "worker"]:
        problem("downpour.yaml: expected Jobs for the chief, the ps and the workers: %s" % actual)
    for cluster in clusters:
        if cluster != actual:
            problem("downpour.yaml: TF_CONFIG's cluster is not the Jobs' pods: %s" % cluster)
    for job in jobs:
        probe = job["spec"]["template"]["spec"]["containers"][0].get("readinessProbe")
        if job["metadata"]["name"].endswith("-ps") and \
                (probe or {}).get("httpGet", {}).get("path") != "/healthz":
            problem("%s: no /healthz readiness probe" % job["metadata"]["name"])


def check_tfjob(scratch):
    job = yaml.safe_load(open(os.path.join(DEPLOY, "kubernetes", "tfjob.yaml")))
    specs = job["spec"]["tfReplicaSpecs"]
    name = job["metadata"]["name"]
    # The training operator's TF_CONFIG: one headless Service per replica.
    cluster = {rtype.lower(): ["%s-%s-%d.default.svc:2222" % (name, rtype.lower(), i)
                               for i in range(spec["replicas"])] for rtype, spec in specs.items()}
    for rtype, spec in specs.items():
        container = spec["template"]["spec"]["containers"][0]
        if container["name"] != "tensorflow" or \
                {"name": "tfjob-port", "containerPort": 2222} not in container["ports"]:
            problem("tfjob.yaml %s: the operator needs container tensorflow with port tfjob-port 2222" % rtype)
        for i in range(spec["replicas"]):
            env = container_env(container, "%s-%s-%d" % (name, rtype.lower(), i), i)
            check_names("tfjob.yaml %s %d" % (rtype, i), env)
            check_workarounds("tfjob.yaml %s %d" % (rtype, i), env)
            env["TF_CONFIG"] = json.dumps({"cluster": cluster, "environment": "cloud",
                                           "task": {"type": rtype.lower(), "index": i}})
            accepted("tfjob.yaml %s %d" % (rtype, i), env, scratch)


def check_systemd(scratch):
    unit_dir = os.path.join(DEPLOY, "systemd")
    env = {}
    for line in open(os.path.join(unit_dir, "cluster.env")):
        if line.strip() and not line.startswith("#"):
            key, _, value = line.strip().partition("=")
            env[key] = value
    check_names("cluster.env", env)
    shutil.copy(os.path.join(unit_dir, "cluster.env"), scratch)
    analyze = shutil.which("systemd-analyze")
    for unit in ("downpour-ps@.service", "downpour-worker@.service"):
        text = open(os.path.join(unit_dir, unit)).read()
        start = re.search(r"^ExecStart=/usr/bin/downpour (.*)$", text, re.M)
        args = start.group(1).replace("%i", "0").split()
        accepted(unit, dict(env, **{"DOWNPOUR_" + a[2:].split("=")[0].upper().replace("-", "_"):
                                    a.split("=", 1)[1] for a in args}), scratch)
        if not analyze:
            print("deploy: skipped systemd-analyze verify (not installed)")
            continue
        text = text.replace("/usr/bin/downpour", BINARY).replace(
            "/etc/downpour/cluster.env", os.path.join(scratch, "cluster.env"))
        instance = os.path.join(scratch, unit.replace("@", "@0"))
        open(instance, "w").write(text)
        r = subprocess.run([analyze, "verify", "--man=no", instance], capture_output=True, text=True)
        if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
            problem("%s: systemd-analyze verify: %s" % (unit, (r.stdout + r.stderr).strip()))


def check_dockerfile():
    text = open(os.path.join(DEPLOY, "Dockerfile")).read()
    runtime = text[text.rindex("FROM debian:12"):]
    listed = set(re.findall(r"\b(lib[a-z0-9.+-]+|dataset-[a-z-]+)\b", runtime))
    if re.search(r"apt-get install [^&]*\.deb", runtime.replace("\\\n", " ")):
        # The Debian package of the build stage: what its Depends name comes along.
        cmake = open(os.path.join(SOURCE, "cmake", "package.cmake")).read()
        depends = re.search(r'CPACK_DEBIAN_PACKAGE_DEPENDS "([^"]*)"', cmake, re.S).group(1)
        listed |= set(re.findall(r"(?:^|, )\s*([a-z0-9.+-]+)", depends.replace("\\\n", "")))
    elif "libdownpour_model" not in runtime:
        problem("Dockerfile: the runtime stage neither installs the package nor copies "
                "libdownpour_model.so, which a portable build's binary needs")
    provided = set(listed)
    for package in listed:  # what they bring along
        deps = subprocess.run(["dpkg-query", "-W", "-f=${Depends}", package],
                              capture_output=True, text=True).stdout
        provided |= set(re.findall(r"(?:^|, |\| )([a-z0-9.+-]+)", deps))
    ldd = subprocess.run(["ldd", BINARY], capture_output=True, text=True).stdout
    for lib in re.findall(r"=> (/\S+)", ldd):
        owner = subprocess.run(["dpkg", "-S", os.path.realpath(lib)], capture_output=True,
                               text=True).stdout.split(":")[0]
        essential = owner in ("libc6", "libgcc-s1", "libstdc++6", "zlib1g")
        if owner and not essential and owner not in provided:
            problem("Dockerfile: %s (package %s) is not installed in the runtime image" % (lib, owner))


with tempfile.TemporaryDirectory() as scratch:
    check_kubernetes(scratch)
    check_tfjob(scratch)
    check_systemd(scratch)
check_dockerfile()
if problems:
    sys.exit(1)
print("deploy: ok")
