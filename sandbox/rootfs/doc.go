// Package rootfs keeps the root file systems a task sandbox can run on,
// unpacked from OCI image archives and stored by image digest, so that an
// operator's `--sandbox-rootfs REF` costs one unpack per image, not one per
// task or per server start.
//
// An archive is what `docker save` writes (the legacy layout: manifest.json,
// <id>/layer.tar, <hex>.json; or the OCI layout of docker 25 and later),
// `podman save` or `skopeo copy … oci-archive:`: an OCI image layout
// (oci-layout, index.json, blobs/sha256/<hex>) in a tar, read in place
// (so not compressed: a gzip or zstd archive is refused with the advice to
// decompress it). It must hold one image; an image index (a manifest list)
// is narrowed to its linux image for the architecture the server runs on,
// and an image for another one is refused rather than left to fail in the
// sandbox with "exec format error". Layers may be plain tar, gzip or zstd,
// told apart by their first bytes.
//
// The store trusts nothing in an archive:
//
//   - Every blob is hashed as it is read and compared with its digest (the
//     manifest's descriptor; in a legacy archive the config's file name and
//     the config's diff_ids); a mismatch refuses the image naming the blob.
//   - Entry names are cleaned the way container runtimes do: a leading "/"
//     is dropped ("/usr/bin/env" is "usr/bin/env") and "a/../b" is "b". A
//     name whose ".." would leave the root ("../x", "/../x", "a/../../x") is
//     refused, not clamped: no tool writes one, so it marks a hostile
//     archive.
//   - Every file operation on the tree goes through an os.Root opened on it
//     (openat2 with RESOLVE_BENEATH on Linux), so an entry is never written,
//     linked or removed through a symbolic link that leads out of the tree:
//     such an entry ("evil -> ../../../etc", then "evil/passwd") refuses the
//     image. Links that resolve out of the tree through an absolute target
//     count as leading out: os.Root does not follow absolute links, where
//     a container runtime would resolve them inside the root. Symbolic links
//     themselves are created as they are, absolute targets included: they
//     are resolved inside the sandbox when it runs. A hard link must name a
//     file of the tree.
//   - Device nodes and FIFOs are not created (a lower layer's file at their
//     path is removed, as if they were whiteouts). Set-uid and set-gid bits
//     are dropped everywhere; the sticky bit stays on folders (a /tmp of
//     mode 1777 keeps its meaning) and is dropped from files. Other
//     permission bits and modification times are kept; owners, extended
//     attributes (file capabilities among them) are not applied: every
//     file belongs to the user the server runs as.
//   - Whiteouts follow the OCI layer specification: ".wh.<name>" removes
//     <name> of lower layers from its folder, ".wh..wh..opq" removes every
//     entry of lower layers from its folder, whatever their order in the
//     layer's tar, and never an entry of the same layer. Whiteout files
//     never appear in the tree; other ".wh..wh." names (AUFS bookkeeping)
//     are ignored.
//   - An image over its Limits (bytes of file content, entries, layers) is
//     refused with skilld.ETOOLARGE naming the limit, as soon as the limit
//     is passed.
//
// An image is unpacked into <dir>/.tmp-<random>/rootfs and the folder
// renamed to <dir>/<hex> only when complete, with a marker file
// (unpacked.json) written last, so a refused or interrupted unpack leaves
// nothing a later call could take for an image; a refused one removes its
// folder at once. What a crashed or killed process left is removed by the
// next Open of the store: a temporary folder is an orphan when no process
// holds the flock on its .lock file (the kernel drops a lock when its
// process ends, however it ends; unlike a process id, this holds across
// PID namespaces and reused ids, and unlike an age it never takes a slow
// unpack in progress for a dead one) and it is over a minute old (it is
// made a moment before its lock is taken). Several servers may share a
// store folder; see Store.
package rootfs
