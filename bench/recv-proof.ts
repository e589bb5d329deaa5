// Proof on real histories (issue 24 defect 0): push large old public repositories to svc in full,
// over HTTP and over SSH, and mirror one of them. Old histories carry what C git's fsck warns
// about (zero-padded modes, bad time zones, tags without a tagger); svc must take them, say so in
// `remote: warning:` lines, and hold every ref afterwards.
//
//   bun bench/recv-proof.ts [--repos redis,git,rails,httpd,ohmyzsh,curl,frr] [--transports http,ssh]
//                           [--mirror ohmyzsh] [--out FILE.json] [--prepare-only]
//
// Sources come from /work/.mirror/<owner>+<name>/repo (the `fetch` tool's snapshots) and are
// cloned into bench/work/recv-proof/src/ as the issue says: redis with
// `git clone --bare --no-local --single-branch --branch unstable --no-tags`, the others with
// `git clone --bare --no-local` (every branch and tag). A snapshot lacks files of 4 MiB and more;
// when that leaves a ref's history incomplete, that ref is left out (counted in the results).
// Then for each repository and transport: a new svc repository, `git push --mirror`, the wall
// time, the `remote:` lines, and `git ls-remote` compared with the source's refs.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnServer } from "./lib/proc.ts";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc } from "./lib/git-svc.ts";

const { values: args } = parseArgs({
  options: {
    repos: { type: "string", default: "redis,git,rails,httpd,ohmyzsh" },
    transports: { type: "string", default: "http,ssh" },
    mirror: { type: "string", default: "ohmyzsh" },
    out: { type: "string" },
    "prepare-only": { type: "boolean", default: false },
  },
});

const SOURCES: Record<string, { snapshot: string; clone: string[] }> = {
  redis: { snapshot: "redis+redis", clone: ["--single-branch", "--branch", "unstable", "--no-tags"] },
  git: { snapshot: "git+git", clone: [] },
  rails: { snapshot: "rails+rails", clone: [] },
  httpd: { snapshot: "apache+httpd", clone: [] },
  ohmyzsh: { snapshot: "ohmyzsh+ohmyzsh", clone: [] },
  curl: { snapshot: "curl+curl", clone: [] },
  frr: { snapshot: "FRRouting+frr", clone: [] },
};

const WORK = join(ROOT, "bench/work/recv-proof");
const SRC = join(WORK, "src");
const log = (...a: unknown[]) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...a);

async function sh(
  cmd: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string; seconds: number }> {
  const t0 = performance.now();
  const p = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: { ...(process.env as Record<string, string>), ...opts.env },
    stdin: opts.input === undefined ? "ignore" : new TextEncoder().encode(opts.input),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr, seconds: Math.round((performance.now() - t0) / 100) / 10 };
}

async function must(cmd: string[], opts: Parameters<typeof sh>[1] = {}): Promise<string> {
  const r = await sh(cmd, opts);
  if (r.code !== 0) throw new Error(`${cmd.join(" ")} failed (${r.code}): ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

/** The source as the issue describes it; refs whose history the snapshot lacks objects of are left out. */
async function prepare(name: string): Promise<{ dir: string; refs: number; leftOut: string[]; objects: number }> {
  const { snapshot, clone } = SOURCES[name]!;
  const origin = `/work/.mirror/${snapshot}/repo`;
  const dir = join(SRC, `${name}.git`);
  const leftOutFile = join(SRC, `${name}.left-out`);
  if (!existsSync(join(dir, "packed-refs")) && !existsSync(join(dir, "refs"))) {
    rmSync(dir, { recursive: true, force: true });
    const r = await sh(["git", "clone", "-q", "--bare", "--no-local", ...clone, origin, dir]);
    let leftOut: string[] = [];
    if (r.code !== 0) {
      log(`${name}: clone failed (${r.stderr.trim().split("\n").at(-1)}); leaving out the refs that reach missing objects`);
      rmSync(dir, { recursive: true, force: true });
      // One walk finds what the snapshot lacks; the commits that add those objects (merges
      // diffed too; no rename detection, which would read the missing blobs) are what a ref
      // must not contain. (A walk per ref took over 30 minutes on
      // rails, whose main line has lacked a blob since 2008.)
      const all = (await must(["git", "-C", origin, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags"])).split("\n").filter(Boolean);
      const missing = [...(await sh(["git", "-C", origin, "rev-list", "--objects", "--missing=print", "--all"])).stdout.matchAll(/^\?([0-9a-f]{40})$/gm)].map(
        (m) => m[1]!,
      );
      const adding =
        missing.length === 0
          ? []
          : [
              ...new Set(
                (await must(["git", "-C", origin, "log", "--all", "-m", "--no-renames", "--format=%H", ...missing.map((o) => `--find-object=${o}`)]))
                  .split("\n")
                  .filter(Boolean),
              ),
            ];
      log(`${name}: ${missing.length} objects missing from the snapshot, added by ${adding.length} commits: ${adding.map((c) => c.slice(0, 10)).join(" ")}`);
      const keep = (
        await must(["git", "-C", origin, "for-each-ref", "--format=%(refname)", ...adding.map((c) => `--no-contains=${c}`), "refs/heads", "refs/tags"])
      )
        .split("\n")
        .filter(Boolean);
      // What is kept must be whole: one walk over it all.
      const check = await sh(["git", "-C", origin, "rev-list", "--objects", "--missing=print", "--stdin"], { input: `${keep.join("\n")}\n` });
      if (check.code !== 0 || /^\?/m.test(check.stdout)) throw new Error(`${name}: the refs kept still reach missing objects`);
      const kept = new Set(keep);
      leftOut = all.filter((r) => !kept.has(r)).sort();
      await must(["git", "init", "-q", "--bare", dir]);
      for (let i = 0; i < keep.length; i += 200)
        await must(["git", "-C", dir, "fetch", "-q", "--no-tags", origin, ...keep.slice(i, i + 200).map((r) => `+${r}:${r}`)]);
    }
    writeFileSync(leftOutFile, leftOut.join("\n"));
  }
  const refs = (await must(["git", "-C", dir, "for-each-ref", "--format=%(refname)"])).split("\n").filter(Boolean).length;
  const objects = Number(/in-pack: (\d+)/.exec(await must(["git", "-C", dir, "count-objects", "-v"]))?.[1] ?? 0);
  return { dir, refs, leftOut: readFileSync(leftOutFile, "utf8").split("\n").filter(Boolean), objects };
}

/** `git fsck` of the source, as C git sees it: message ids and counts (kept beside the source: minutes on git.git). */
async function fsckSummary(dir: string): Promise<Record<string, number>> {
  const cached = `${dir}.fsck.json`;
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, "utf8"));
  const counts = await runFsck(dir);
  writeFileSync(cached, JSON.stringify(counts));
  return counts;
}

async function runFsck(dir: string): Promise<Record<string, number>> {
  const r = await sh(["git", "-C", dir, "fsck", "--no-dangling", "--no-progress"]);
  const counts: Record<string, number> = {};
  for (const m of r.stderr.matchAll(/^(?:error|warning) in \w+ [0-9a-f]{40}: (\w+):/gm)) counts[m[1]!] = (counts[m[1]!] ?? 0) + 1;
  return counts;
}

async function main() {
  mkdirSync(SRC, { recursive: true });
  const repos = args.repos!.split(",").filter(Boolean);
  const transports = args.transports!.split(",").filter(Boolean) as ("http" | "ssh")[];
  const results: Record<string, unknown> = {
    started: new Date().toISOString(),
    commit: (await sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])).stdout.trim(),
    git: (await sh(["git", "--version"])).stdout.trim(),
    load_before: loadavg().map((l) => Math.round(l * 100) / 100),
    pushes: [] as unknown[],
  };
  const sources: Record<string, Awaited<ReturnType<typeof prepare>> & { fsck: Record<string, number> }> = {};
  for (const name of repos) {
    const s = await prepare(name);
    // ddnet/ddnet's snapshot: every branch and tag reaches a map file of 4 MiB or more.
    if (s.refs === 0) throw new Error(`${name}: every ref reaches objects the snapshot lacks; nothing to push`);
    sources[name] = { ...s, fsck: await fsckSummary(s.dir) };
    log(`${name}: ${s.objects} objects, ${s.refs} refs (${s.leftOut.length} left out); git fsck: ${JSON.stringify(sources[name]!.fsck)}`);
  }
  if (args["prepare-only"]) return;
  results.sources = Object.fromEntries(
    Object.entries(sources).map(([k, v]) => [k, { objects: v.objects, refs: v.refs, left_out: v.leftOut.length, git_fsck: v.fsck }]),
  );

  const dataDir = join(WORK, "svc");
  rmSync(dataDir, { recursive: true, force: true });
  const svc = await startSvc({ dataDir, log: "warn", env: { SVC_SSH_ADDR: "127.0.0.1:0", SVC_MIRROR_ALLOW_PRIVATE: "1" } });
  try {
    const acct = await bootstrap(svc, "proof");
    const key = join(WORK, "id_ed25519");
    rmSync(key, { force: true });
    rmSync(`${key}.pub`, { force: true });
    await must(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "recv-proof", "-f", key]);
    const addKey = await fetch(`${svc.url}/v1/orgs/proof/ssh-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${acct.token}`, "content-type": "application/json" },
      body: JSON.stringify({ public_key: readFileSync(`${key}.pub`, "utf8").trim(), label: "proof" }),
    });
    if (addKey.status !== 201) throw new Error(`ssh key: ${addKey.status} ${await addKey.text()}`);
    const port = Number(svc.ssh?.split(":").pop());
    const sshEnv = { GIT_SSH_COMMAND: `ssh -i ${key} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o IdentitiesOnly=yes` };
    for (const name of repos) {
      const src = sources[name]!;
      for (const t of transports) {
        const repo = `${name}-${t}`;
        await createRepo(svc, acct, repo);
        const url = t === "http" ? gitUrl(svc, acct, repo) : `ssh://git@127.0.0.1:${port}/proof/${repo}.git`;
        const load = loadavg()[0]!;
        log(`push ${name} over ${t}…`);
        const r = await sh(["git", "-C", src.dir, "push", "--mirror", url], { env: t === "ssh" ? sshEnv : {} });
        const remote = r.stderr.split("\n").filter((l) => l.startsWith("remote: "));
        const lsRemote = await sh(["git", "ls-remote", url], { env: t === "ssh" ? sshEnv : {} });
        const theirs = new Set(
          lsRemote.stdout
            .split("\n")
            .filter(Boolean)
            .map((l) => l.replace("\t", " "))
            .filter((l) => !l.endsWith(" HEAD")),
        );
        // The source as git ls-remote shows it too: annotated tags come with their peeled `^{}` lines.
        const ours = new Set(
          (await must(["git", "ls-remote", src.dir]))
            .split("\n")
            .filter(Boolean)
            .map((l) => l.replace("\t", " "))
            .filter((l) => !l.endsWith(" HEAD")),
        );
        const same = theirs.size === ours.size && [...ours].every((l) => theirs.has(l));
        const differing = [...ours].filter((l) => !theirs.has(l)).concat([...theirs].filter((l) => !ours.has(l)));
        const entry = {
          repo: name,
          transport: t,
          exit: r.code,
          seconds: r.seconds,
          load_1m: Math.round(load * 100) / 100,
          refs_pushed: src.refs,
          ls_remote_lines: ours.size,
          refs_match: same,
          differing: differing.slice(0, 20),
          remote_warning_lines: remote.filter((l) => l.includes("warning:")).length,
          remote_summary: remote.find((l) => l.includes("accepted")) ?? null,
          remote_lines: remote.slice(0, 12).map((l) => l.trimEnd()),
          error: r.code === 0 ? null : r.stderr.slice(-1500),
        };
        (results.pushes as unknown[]).push(entry);
        log(JSON.stringify(entry));
      }
    }
    // A mirror of one of them, from C git's http-backend on this machine.
    if (args.mirror) {
      const name = args.mirror;
      const src = sources[name] ?? (await prepare(name));
      const backend = await spawnServer([process.execPath, join(ROOT, "bench/lib/http-backend-server.ts"), SRC], {
        env: process.env as Record<string, string>,
        stderrFile: join(WORK, "origin.log"),
      });
      try {
        const originUrl = `${backend.url}/${name}.git`;
        const t0 = performance.now();
        const created = await fetch(`${svc.url}/v1/orgs/proof/repos`, {
          method: "POST",
          headers: { authorization: `Bearer ${acct.token}`, "content-type": "application/json" },
          body: JSON.stringify({ name: `${name}-mirror`, kind: "mirror", origin_url: originUrl }),
        });
        if (created.status !== 201) throw new Error(`mirror create: ${created.status} ${await created.text()}`);
        let state: any = null;
        for (;;) {
          state = await (await fetch(`${svc.url}/v1/orgs/proof/repos/${name}-mirror`, { headers: { authorization: `Bearer ${acct.token}` } })).json();
          if (state.sync_error || state.last_synced_commit) break;
          await Bun.sleep(500);
        }
        const lsRemote = await sh(["git", "ls-remote", gitUrl(svc, acct, `${name}-mirror`)]);
        const theirs = lsRemote.stdout.split("\n").filter((l) => l && !l.endsWith("\tHEAD") && !l.endsWith("^{}")).length;
        const entry = {
          repo: name,
          transport: "mirror sync",
          seconds: Math.round((performance.now() - t0) / 100) / 10,
          sync_error: state.sync_error ?? null,
          refs: theirs,
          refs_expected: src.refs,
        };
        results.mirror = entry;
        log(JSON.stringify(entry));
      } finally {
        await backend.stop();
      }
    }
  } finally {
    results.load_after = loadavg().map((l) => Math.round(l * 100) / 100);
    await svc.stop();
    // svc's own warnings (a mirror sync logs what git's fsck warns about there).
    writeFileSync(join(WORK, "svc.log"), svc.logs());
  }
  const out = args.out ?? join(ROOT, "bench/out", `recv-proof-${new Date().toISOString().slice(0, 16).replace(/[:T]/g, "")}.json`);
  mkdirSync(join(out, ".."), { recursive: true });
  writeFileSync(out, JSON.stringify(results, null, 2));
  console.log(JSON.stringify(results, null, 2));
}

await main();
