# Pushes one ref with a git client other than C git (issue 24 defect 8), for interop.test.ts:
#   /usr/bin/python3 interop-push.py pygit2|dulwich REPO_DIR URL SRC_REF DST_REF [KEY_PATH]
# HTTP URLs carry the credentials (x:TOKEN@host); SSH uses KEY_PATH (pygit2) or GIT_SSH_COMMAND
# (dulwich). Prints one JSON line: {"ok": bool, "status": {ref: null | message}}.
import json
import sys

client, repo_dir, url, src, dst = sys.argv[1:6]
key = sys.argv[6] if len(sys.argv) > 6 else None
status = {}

if client == "pygit2":
    import pygit2
    from urllib.parse import urlsplit

    class Callbacks(pygit2.RemoteCallbacks):
        def credentials(self, url_, username_from_url, allowed_types):
            if key:
                return pygit2.Keypair(username_from_url or "git", key + ".pub", key, "")
            parts = urlsplit(url_)
            return pygit2.UserPass(parts.username or "x", parts.password or "")

        def certificate_check(self, certificate, valid, host):
            return True

        def push_update_reference(self, refname, message):
            status[refname] = message

    import uuid

    repo = pygit2.Repository(repo_dir)
    name = "interop-" + uuid.uuid4().hex[:8]
    remote = repo.remotes.create(name, url)
    try:
        remote.push([f"{src}:{dst}"], callbacks=Callbacks())
    finally:
        repo.remotes.delete(name)
elif client == "dulwich":
    import io
    from dulwich import porcelain

    err = io.BytesIO()
    porcelain.push(repo_dir, remote_location=url, refspecs=[f"{src}:{dst}".encode()], errstream=err, outstream=io.BytesIO())
    status[dst] = None
else:
    raise SystemExit(f"unknown client {client}")

print(json.dumps({"ok": all(v is None for v in status.values()), "status": status}))
