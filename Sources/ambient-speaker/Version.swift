// SPDX-License-Identifier: Apache-2.0
// Written by scripts/version --write from CHANGELOG.md's top released entry; do not edit.

/// The release this binary belongs to: `ambient-speaker --version` and the
/// `software` field of the `device` topic.
enum ReleaseVersion {
    static let version = "0.2.0"
}
