#!/usr/bin/env python3
"""Edit an OCI image layout the way an image's author could (tests only).

usage: oci-edit.py LAYOUT OP ARGS...

  append TAG NEWTAG TAR [MEDIATYPE] [--bad-diff-id] [--store-raw]
        a new manifest NEWTAG: TAG's layers and one more, TAR (an
        uncompressed tar file) stored as MEDIATYPE (default tar+gzip);
        --bad-diff-id puts another stream's digest in the config,
        --store-raw stores TAR uncompressed whatever MEDIATYPE says
  flip-layer TAG N        change one byte of layer N's blob (from 1), in place
  set-digest TAG DIGEST   index.json's descriptor for TAG names DIGEST
  blob TAG WHAT           print the path of TAG's manifest, config or layer-N
  nest TAG NEWTAG PLATFORM
        NEWTAG names a new image index holding TAG's manifest for PLATFORM
        ("os/arch") and, first, the same manifest for plan9/mips
  layout-version V        oci-layout says imageLayoutVersion V

Blobs are written as the spec says, content-addressed by SHA-256.  Only
builds and edits; never extracts anything.
"""
import gzip
import hashlib
import json
import os
import sys

REF = "org.opencontainers.image.ref.name"
GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"


def blob_path(layout, digest):
    return os.path.join(layout, "blobs", "sha256", digest.split(":", 1)[1])


def put_blob(layout, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    with open(blob_path(layout, digest), "wb") as f:
        f.write(data)
    return {"digest": digest, "size": len(data)}


def load(path):
    with open(path, "rb") as f:
        return json.load(f)


def index(layout):
    return load(os.path.join(layout, "index.json"))


def save_index(layout, idx):
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump(idx, f)


def descriptor(layout, tag):
    for m in index(layout)["manifests"]:
        if m.get("annotations", {}).get(REF) == tag:
            return m
    sys.exit("no tag " + tag)


def tag_descriptor(layout, desc, tag):
    idx = index(layout)
    idx["manifests"] = [m for m in idx["manifests"]
                        if m.get("annotations", {}).get(REF) != tag]
    desc = dict(desc)
    desc["annotations"] = {REF: tag}
    idx["manifests"].append(desc)
    save_index(layout, idx)


def main():
    layout, op, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if op == "append":
        tag, newtag, tar = args[0], args[1], args[2]
        media = args[3] if len(args) > 3 and not args[3].startswith("--") else GZIP
        bad = "--bad-diff-id" in args
        raw = open(tar, "rb").read()
        packed = media.endswith("gzip") and "--store-raw" not in args
        stored = gzip.compress(raw, mtime=0) if packed else raw
        desc = descriptor(layout, tag)
        manifest = load(blob_path(layout, desc["digest"]))
        config = load(blob_path(layout, manifest["config"]["digest"]))
        diff = hashlib.sha256(raw + (b"\0" if bad else b"")).hexdigest()
        config["rootfs"]["diff_ids"].append("sha256:" + diff)
        c = put_blob(layout, json.dumps(config).encode())
        manifest["config"].update(c)
        layer = put_blob(layout, stored)
        layer["mediaType"] = media
        manifest["layers"].append(layer)
        m = put_blob(layout, json.dumps(manifest).encode())
        m["mediaType"] = desc["mediaType"]
        tag_descriptor(layout, m, newtag)
    elif op == "flip-layer":
        tag, n = args[0], int(args[1])
        manifest = load(blob_path(layout, descriptor(layout, tag)["digest"]))
        path = blob_path(layout, manifest["layers"][n - 1]["digest"])
        data = bytearray(open(path, "rb").read())
        data[len(data) // 2] ^= 0x01
        open(path, "wb").write(bytes(data))
    elif op == "set-digest":
        tag, digest = args
        idx = index(layout)
        for m in idx["manifests"]:
            if m.get("annotations", {}).get(REF) == tag:
                m["digest"] = digest
        save_index(layout, idx)
    elif op == "blob":
        tag, what = args
        desc = descriptor(layout, tag)
        manifest = load(blob_path(layout, desc["digest"]))
        if what == "manifest":
            print(blob_path(layout, desc["digest"]))
        elif what == "config":
            print(blob_path(layout, manifest["config"]["digest"]))
        else:
            n = int(what.split("-")[1])
            print(blob_path(layout, manifest["layers"][n - 1]["digest"]))
    elif op == "nest":
        tag, newtag, platform = args
        desc = dict(descriptor(layout, tag))
        desc.pop("annotations", None)
        other = dict(desc, platform={"os": "plan9", "architecture": "mips"})
        os_, arch = platform.split("/")[:2]
        mine = dict(desc, platform={"os": os_, "architecture": arch})
        nested = {"schemaVersion": 2,
                  "mediaType": "application/vnd.oci.image.index.v1+json",
                  "manifests": [other, mine]}
        d = put_blob(layout, json.dumps(nested).encode())
        d["mediaType"] = "application/vnd.oci.image.index.v1+json"
        tag_descriptor(layout, d, newtag)
    elif op == "layout-version":
        with open(os.path.join(layout, "oci-layout"), "w") as f:
            json.dump({"imageLayoutVersion": args[0]}, f)
    else:
        sys.exit("unknown op " + op)


main()
