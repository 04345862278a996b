#!/usr/bin/python3
"""Assembles the file set of deploy/Dockerfile's runtime stage in a clean root.

    runtime_root.py DOCKERFILE DEB ROOT

The runtime stage is debian:12 (Debian's "required" packages) plus what its
`apt-get install` line names, the Debian package of this build standing in
for the one the build stage makes. Those packages and everything they depend
on are taken from this machine's own installed Debian 12 packages (their
files linked or copied into ROOT, their entries into ROOT's dpkg database),
so no network is needed; then `dpkg --root` installs the .deb into ROOT as
apt would, running its postinst there (chroot). test_package then runs a job
in ROOT as the image's USER. Prints one line per problem and exits 1.
"""
import os
import re
import shutil
import subprocess
import sys

DOCKERFILE, DEB, ROOT = sys.argv[1], sys.argv[2], sys.argv[3]


def fail(text):
    print("runtime_root: " + text)
    sys.exit(1)


def runtime_packages():
    text = open(DOCKERFILE).read()
    stage = text[text.rindex("\nFROM "):]
    install = re.search(r"apt-get install ([^&]*)", stage.replace("\\\n", " "))
    if not install:
        fail("the runtime stage installs no packages")
    words = [w for w in install.group(1).split() if not w.startswith("-")]
    debs = [w for w in words if w.endswith(".deb")]
    if not debs:
        fail("the runtime stage does not install the build stage's Debian package")
    return [w for w in words if not w.endswith(".deb")]


def installed_packages():
    """name -> (dependencies text, ...) of every installed package, and what
    each virtual package name is provided by (one dpkg-query for all)."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Status}\t${Pre-Depends}\t"
                          "${Depends}\t${Provides}\n"], capture_output=True, text=True).stdout
    packages, provided = {}, {}
    for line in out.splitlines():
        name, status, pre, depends, provides = line.split("\t")
        if status != "install ok installed":
            continue
        packages[name] = pre + "," + depends
        for virtual in filter(None, (p.strip() for p in provides.split(","))):
            provided.setdefault(re.sub(r"[ (].*", "", virtual), name)
    return packages, provided


PACKAGES, PROVIDED = installed_packages()


def dependencies(fields):
    """The installed package of every dependency (the first installed alternative)."""
    names = []
    for clause in filter(None, (c.strip() for c in fields.split(","))):
        alternatives = [re.sub(r"[ (:].*", "", a.strip()) for a in clause.split("|")]
        chosen = next((a if a in PACKAGES else PROVIDED[a] for a in alternatives
                       if a in PACKAGES or a in PROVIDED), None)
        if chosen is None:
            fail("no installed package for the dependency %s" % clause)
        names.append(chosen)
    return names


def closure(roots):
    seen, todo = set(), list(roots)
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        if package not in PACKAGES:
            fail("%s is not installed on this machine (scripts/install-deps)" % package)
        seen.add(package)
        todo += dependencies(PACKAGES[package])
    return seen


def link_or_copy(path):
    target = ROOT + path
    if os.path.islink(path):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            os.symlink(os.readlink(path), target)
    elif os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    elif os.path.isfile(path) and not os.path.lexists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)


def main():
    required = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Priority}\\n"],
                              capture_output=True, text=True).stdout
    base = [line.split()[0] for line in required.splitlines() if line.endswith(" required")]
    deb_depends = subprocess.run(["dpkg-deb", "-f", DEB, "Depends"], capture_output=True,
                                 text=True).stdout
    packages = closure(base + runtime_packages() + dependencies(deb_depends))
    # Merged /usr (Debian 12): /bin, /lib... are links into /usr, as in the image.
    for top in ("bin", "sbin", "lib", "lib64"):
        os.makedirs(os.path.join(ROOT, "usr", top), exist_ok=True)
        os.symlink("usr/" + top, os.path.join(ROOT, top))
    for d in ("etc", "tmp", "var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers",
              "proc", "dev"):
        os.makedirs(os.path.join(ROOT, d), exist_ok=True)
    os.chmod(os.path.join(ROOT, "tmp"), 0o1777)
    status = []
    for package in sorted(packages):
        for path in subprocess.run(["dpkg-query", "-L", package], capture_output=True,
                                   text=True).stdout.splitlines():
            if path in ("/.", "/bin", "/sbin", "/lib", "/lib64") or not os.path.lexists(path):
                continue
            link_or_copy(path)
        status.append(subprocess.run(["dpkg-query", "-s", package], capture_output=True,
                                     text=True).stdout.strip())
    open(os.path.join(ROOT, "var/lib/dpkg/status"), "w").write("\n\n".join(status) + "\n")
    open(os.path.join(ROOT, "var/lib/dpkg/available"), "w").close()
    # What base-passwd's postinst would write: the system's users and groups.
    shutil.copy("/usr/share/base-passwd/passwd.master", os.path.join(ROOT, "etc/passwd"))
    shutil.copy("/usr/share/base-passwd/group.master", os.path.join(ROOT, "etc/group"))
    for name, fields in (("shadow", 8), ("gshadow", 3)):
        src = os.path.join(ROOT, "etc", "passwd" if name == "shadow" else "group")
        with open(os.path.join(ROOT, "etc", name), "w") as out:
            for line in open(src):
                out.write(line.split(":")[0] + ":*" + ":" * (fields - 1) + "\n")
    r = subprocess.run(["dpkg", "--root=" + ROOT, "--force-not-root", "-i", DEB],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("dpkg -i into the root failed:\n" + r.stdout + r.stderr)
    subprocess.run(["chroot", ROOT, "/sbin/ldconfig"], check=False)
    print("runtime_root: %d packages and %s in %s" % (len(packages), os.path.basename(DEB), ROOT))


main()
