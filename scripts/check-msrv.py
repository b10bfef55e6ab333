#!/usr/bin/env python3
"""Checks the lock file against the workspace's declared minimum Rust version (MSRV).

Fails when a locked dependency declares a `rust-version` above the workspace's (`[workspace.package]
rust-version` in Cargo.toml, inherited by every member), or when the members do not all declare the
same one. The code's own use of newer std APIs is checked by clippy (`cargo clippy --workspace
--all-targets -- -D clippy::incompatible_msrv`, see .ci/run); together the two stand in for a build
with the old toolchain, which CI does not install.

Reads `cargo metadata --format-version 1 --locked` (every package of the lock file, for every
platform). Run from anywhere in the repository: `python3 scripts/check-msrv.py`.
"""

import json
import subprocess
import sys


def version(v):
    """'1.85' or '1.85.0' as a comparable tuple (1, 85, 0)."""
    parts = [int(p) for p in v.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        check=True,
        stdout=subprocess.PIPE,
    ).stdout
    meta = json.loads(out)
    members = set(meta["workspace_members"])
    packages = meta["packages"]

    declared = {p["name"]: p.get("rust_version") for p in packages if p["id"] in members}
    values = set(declared.values())
    if len(values) != 1 or None in values:
        print("check-msrv: the workspace members must all declare the same rust-version "
              "(`rust-version.workspace = true`):", file=sys.stderr)
        for name, v in sorted(declared.items()):
            print(f"  {name}: {v}", file=sys.stderr)
        return 1
    msrv = values.pop()

    deps = [p for p in packages if p["id"] not in members]
    too_new = sorted(
        (p for p in deps if p.get("rust_version") and version(p["rust_version"]) > version(msrv)),
        key=lambda p: (version(p["rust_version"]), p["name"]),
    )
    undeclared = sorted(f'{p["name"]} {p["version"]}' for p in deps if not p.get("rust_version"))
    newest = max((p for p in deps if p.get("rust_version")),
                 key=lambda p: version(p["rust_version"]), default=None)

    if too_new:
        print(f"check-msrv: the workspace declares rust-version {msrv}, but the lock file has "
              "dependencies that need a newer Rust:", file=sys.stderr)
        for p in too_new:
            print(f'  {p["name"]} {p["version"]}: rust-version {p["rust_version"]}', file=sys.stderr)
        print("Raise `rust-version` in Cargo.toml (and README) or pin older versions "
              "(`cargo update -p NAME --precise VERSION`).", file=sys.stderr)
        return 1

    print(f"check-msrv: rust-version {msrv}; {len(deps)} locked dependencies, none newer "
          f"(highest: {newest['name']} {newest['version']}, {newest['rust_version']})"
          if newest else f"check-msrv: rust-version {msrv}; no dependency declares one")
    if undeclared:
        print(f"check-msrv: {len(undeclared)} declare no rust-version (not checked): "
              + ", ".join(undeclared))
    return 0


if __name__ == "__main__":
    sys.exit(main())
