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
  docker-save OUT [OPTIONS] TAG=REPOTAG...
        write OUT, an image archive as `docker save` writes it, holding
        each TAG's image under REPOTAG: before Docker 25, manifest.json,
        each config as HEX.json and each layer as ID/layer.tar,
        uncompressed; with --docker25, this layout (oci-layout,
        index.json, blobs/) beside a manifest.json naming its blobs.
        Options shape an image's author's lies or a writer's habits:
        --gzip (layer.tar files gzipped), --flip-layer (one byte of the
        first layer changed), --config-name=NAME (the config stored as
        NAME), --layer-name=NAME (the first layer listed and stored as
        NAME), --link-layer=TARGET (the first layer's member a symlink to
        TARGET, its data stored nowhere), --xz (the first layer.tar
        xz-compressed)

Blobs are written as the spec says, content-addressed by SHA-256.  Only
builds and edits; never extracts anything.
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

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


def docker_save(layout, args):
    out = args[0]
    opts = {a.split("=", 1)[0]: (a.split("=", 1) + [True])[1]
            for a in args[1:] if a.startswith("--")}
    images = [a.split("=", 1) for a in args[1:] if not a.startswith("--")]
    members, entries, seen = [], [], set()

    def add(name, data=None, link=None):
        if name not in seen:
            seen.add(name)
            members.append((name, data, link))

    if "--docker25" in opts:
        for name in ("oci-layout", "index.json"):
            add(name, open(os.path.join(layout, name), "rb").read())
    for n, (tag, repotag) in enumerate(images):
        desc = descriptor(layout, tag)
        manifest = load(blob_path(layout, desc["digest"]))
        cdigest = manifest["config"]["digest"]
        config = open(blob_path(layout, cdigest), "rb").read()
        if "--docker25" in opts:
            add("blobs/sha256/" + desc["digest"][7:],
                open(blob_path(layout, desc["digest"]), "rb").read())
            cname = "blobs/sha256/" + cdigest[7:]
        else:
            cname = opts.get("--config-name", cdigest[7:] + ".json")
        add(cname, config)
        names = []
        for i, layer in enumerate(manifest["layers"]):
            data = open(blob_path(layout, layer["digest"]), "rb").read()
            first = n == 0 and i == 0
            if "--docker25" in opts:
                name = "blobs/sha256/" + layer["digest"][7:]
            else:
                if layer["mediaType"].endswith("gzip"):
                    data = gzip.decompress(data)
                if "--gzip" in opts:
                    data = gzip.compress(data, mtime=0)
                if "--xz" in opts and first:
                    import lzma
                    data = lzma.compress(data)
                name = hashlib.sha256(("%d:%s" % (i, layer["digest"])).encode()).hexdigest() + "/layer.tar"
            if first and "--layer-name" in opts:
                name = opts["--layer-name"]
            if first and "--flip-layer" in opts:
                data = bytearray(data)
                data[len(data) // 2] ^= 0x01
                data = bytes(data)
            if first and "--link-layer" in opts:
                add(name, link=opts["--link-layer"])
            else:
                add(name, data)
            names.append(name)
        entries.append({"Config": cname, "RepoTags": [repotag], "Layers": names})
    add("manifest.json", json.dumps(entries).encode())
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            info.mtime = 0
            if link is not None:
                info.type = tarfile.SYMTYPE
                info.linkname = link
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))


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
    elif op == "docker-save":
        docker_save(layout, args)
    elif op == "layout-version":
        with open(os.path.join(layout, "oci-layout"), "w") as f:
            json.dump({"imageLayoutVersion": args[0]}, f)
    else:
        sys.exit("unknown op " + op)


main()
