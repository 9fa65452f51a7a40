# SPDX-License-Identifier: Apache-2.0
"""The build tree that CI runs in: a fixed copy of the clone whose Swift
build directories outlive the run.

A clean clone gives every file a new inode and modification time, so every
Swift build in it (the host's debug build, the HIL release builds, the
arm64 cross build, trixie's build, the .deb's build, the fuzzers) starts
from nothing. CI instead copies the clone into one directory (TREE) and
runs there: a file whose bytes did not change keeps its inode and time, a
changed or new file is written (and so is newer than anything built from
it), a file the clone no longer has is removed. The build systems then do
what they do on a developer's machine: rebuild what changed and what
depends on it. Everything else the last run left (logs, VM work
directories, packages, generated files) is removed first, so a run never
reads an output it did not make itself; only the build directories below
persist, and each of them is keyed by what its own build system tracks
(sources, flags, the compiler).

One run at a time owns the tree (a lock); a second one at the same moment
runs in its own clone, cold.
"""
import fcntl
import filecmp
import os
import shutil
import stat
import subprocess

TREE = os.environ.get("CI_TREE", "/var/cache/ambient-speaker/ci-tree")

# Directories (relative to the tree) that persist, and inside each parent
# the names kept; everything else under these parents is removed.
KEEP = {
    ".build": {"x86_64-unknown-linux-gnu", "artifacts", "checkouts", "repositories",
               "plugins", "prebuilts", "arm64", "hil", "trixie", "workspace-state.json",
               "debug.yaml", "release.yaml", "build.db", "plugin-tools.yaml", "debug", "release"},
    ".build/arm64": {"scratch", "debug"},
    ".build/hil": {"build"},
}
KEPT_TOP = {".build", ".build-fuzz"}


def _prune(tree):
    """Removes what the last run left but the build directories in KEEP."""
    for parent, keep in KEEP.items():
        path = os.path.join(tree, parent)
        if not os.path.isdir(path) or os.path.islink(path):
            continue
        for name in os.listdir(path):
            if name in keep:
                continue
            victim = os.path.join(path, name)
            if os.path.isdir(victim) and not os.path.islink(victim):
                shutil.rmtree(victim)
            else:
                os.unlink(victim)


def _same(src, dst, st):
    """True when dst already holds src's bytes, mode and link target."""
    try:
        dt = os.lstat(dst)
    except FileNotFoundError:
        return False
    if stat.S_IFMT(st.st_mode) != stat.S_IFMT(dt.st_mode):
        return False
    if stat.S_ISLNK(st.st_mode):
        return os.readlink(src) == os.readlink(dst)
    if stat.S_IMODE(st.st_mode) != stat.S_IMODE(dt.st_mode):
        return False
    return st.st_size == dt.st_size and filecmp.cmp(src, dst, shallow=False)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def sync(src, tree):
    """Makes tree a copy of src (its build directories aside), writing only
    what differs; returns (written, removed)."""
    written = removed = 0
    for here, dirs, files in os.walk(src):
        rel = os.path.relpath(here, src)
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in KEPT_TOP]
            rel = ""
        target = os.path.join(tree, rel)
        if os.path.lexists(target) and not os.path.isdir(target):
            _remove(target)
        os.makedirs(target, exist_ok=True)
        wanted = set(dirs) | set(files)
        for name in os.listdir(target):
            if name not in wanted and not (rel == "" and name in KEPT_TOP):
                _remove(os.path.join(target, name))
                removed += 1
        for name in files + [d for d in dirs if os.path.islink(os.path.join(here, d))]:
            s, d = os.path.join(here, name), os.path.join(target, name)
            st = os.lstat(s)
            if _same(s, d, st):
                continue
            _remove(d)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(s), d)
            else:
                shutil.copyfile(s, d)
                os.chmod(d, stat.S_IMODE(st.st_mode))
            written += 1
        dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(here, x))]
    return written, removed


def _mounts_below(tree):
    """Mount points inside the tree (a chroot's /proc or a bind left by a
    killed run), deepest first: pruning must never walk into one."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].replace("\\040", " ")
            if point.startswith(tree + "/"):
                found.append(point)
    return sorted(found, key=len, reverse=True)


def enter(src):
    """Syncs the clone into TREE and returns (tree, written, removed) with
    the tree's lock held for the life of the process, or (None, why) when
    the tree cannot be used (another run holds it, a mount is left in it)."""
    os.makedirs(TREE, exist_ok=True)
    lock = open(TREE + ".lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None, "another run holds it"
    for point in _mounts_below(TREE):
        subprocess.run(["umount", "-l", point], stderr=subprocess.DEVNULL)
    left = _mounts_below(TREE)
    if left:
        lock.close()
        return None, f"{left[0]} is mounted inside it"
    _prune(TREE)
    written, removed = sync(src, TREE)
    enter.lock = lock  # held until the process ends
    return TREE, written, removed
