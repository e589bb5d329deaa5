// JGit against svc (issue 24, interoperability; defect 8): clone, fetch, a push of 321 refs and
// a push deleting them, over smart HTTP and over SSH, each result compared with what the same
// JGit operation gets from C git's own server (`git http-backend`, test/helpers/git-http-backend.ts)
// on a repository with the same history. JGit keeps its side of an SSH connection open until the
// push report arrives; svc used to wait for end of input before answering, so both sides waited
// until the idle timeout. A pack is complete at its checksum: each SSH push here finishing at all
// is the check that the report comes then (a hang shows as this test's timeout; with the wait for
// end of input put back in git/pack-indexer.ts, the SSH push of 321 refs hangs and HTTP passes).
//
// The client is Debian's JGit 4.11 (libjgit-java, SSH through libjsch-java's JSch 0.1.5x), driven
// by InteropJGit.java beside this file, compiled with javac into a temp dir. Needs java, javac and
// the jars (scripts/install-test-tools.sh installs them); without them every case is skipped,
// saying why. JGit 4.11 speaks protocol v0 and has no shallow or partial clone.
//
// SSH: JSch 0.1.5x verifies host keys of types ssh-rsa (RSA with SHA-1 signatures), ssh-dss and
// ecdsa-sha2-nistp* only. svc's list is ssh-ed25519, rsa-sha2-512, rsa-sha2-256 (src/ssh/server.ts),
// and ssh2 adds ssh-rsa last for an RSA host key whatever the list says: that ssh-rsa is what JGit
// connects with. Were it dropped without an ECDSA host key in its place, every SSH case here would
// fail with JSch's "Algorithm negotiation fail". The client's key is ECDSA P-256 (and RSA in one
// case: JSch signs with ssh-rsa, SHA-1), rewritten as PEM, the only private key format JSch reads.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHttpBackend, type HttpBackend } from "../../helpers/git-http-backend.ts";
import { fsck, gitSandbox, importHistory, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import {
  makeRepo,
  registerKey,
  run,
  sshPerson,
  sshUrl,
  sshWorkspace,
  startSshServer,
  type SshKey,
  type SshPerson,
  type SshRunningServer,
  type SshWorkspace,
} from "../../helpers/ssh.ts";

setDefaultTimeout(240_000);

const SOURCE = join(import.meta.dir, "InteropJGit.java");
const JARS = ["org.eclipse.jgit.jar", "jsch.jar", "jzlib.jar", "javaewah.jar", "slf4j-api.jar", "slf4j-nop.jar"].map((j) => `/usr/share/java/${j}`);
const JAVA = Bun.which("java");
const JAVAC = Bun.which("javac");
/** Why the JGit cases cannot run here, or null when they can. */
const ABSENT =
  !JAVA || !JAVAC
    ? "no java/javac on PATH (a JDK, e.g. Debian's default-jdk-headless)"
    : JARS.some((j) => !existsSync(j))
      ? `missing ${JARS.filter((j) => !existsSync(j)).join(", ")} (Debian's libjgit-java and libjsch-java; scripts/install-test-tools.sh installs them)`
      : null;
if (ABSENT) console.warn(`interop-jgit: every JGit case skipped: ${ABSENT}`);
const jtest = test.skipIf(ABSENT !== null);

/** Branches and annotated tags of the many-ref push (and as many lightweight tags as annotated). */
const BRANCHES = 160;
const TAGS = 80;

let server: SshRunningServer;
let backend: HttpBackend;
let ws: SshWorkspace;
let g: GitSandbox;
let owner: SshPerson;
let token: string;
let key: SshKey;
let work: string;
let classes: string;
let reference: string;
let rsaKey: SshKey;
let knownHosts: string;
const running = new Set<ReturnType<typeof Bun.spawn>>();

type Transport = "http" | "ssh";
type Side = "svc" | "cgit";

/** JGit's URL of a repository on svc (over `transport`) or on C git's server (always HTTP). */
function jgitUrl(side: Side, transport: Transport, repo: string): string {
  if (side === "cgit") return `${backend.url}/${repo}.git`;
  return transport === "ssh" ? sshUrl(server, "io", repo) : `${server.url}/io/${repo}.git`;
}

/** C git's URL of the same repository, with credentials (for setup pushes and ls-remote). */
function cgitUrl(side: Side, repo: string): string {
  return side === "svc" ? repoUrl(server, "io", repo, token) : `${backend.url.replace("http://", `http://x-token:${token}@`)}/${repo}.git`;
}

/** Runs one InteropJGit operation; returns its JSON answer, throws with its stderr on failure. */
async function jgit<T>(args: string[], opts: { key?: SshKey } = {}): Promise<T> {
  const env: Record<string, string> = { ...g.env, JGIT_TOKEN: token, JGIT_SSH_KEY: (opts.key ?? key).path, JGIT_KNOWN_HOSTS: knownHosts };
  const cp = [classes, ...JARS].join(":");
  const p = Bun.spawn([JAVA!, "-XX:TieredStopAtLevel=1", `-Duser.home=${g.env.HOME}`, "-cp", cp, "InteropJGit", ...args], {
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  running.add(p);
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`JGit ${args[0]} exited ${code}:\n${stderr}`);
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as T;
  } finally {
    running.delete(p);
  }
}

/** Everything `git ls-remote` prints (HEAD and peeled tags included): `{ name: oid }`. */
async function advertised(url: string): Promise<Record<string, string>> {
  const refs: Record<string, string> = {};
  for (const line of (await g.ok(["ls-remote", url])).split("\n")) {
    const [oid, name] = line.split("\t");
    if (oid && name) refs[name] = oid;
  }
  return refs;
}

/** `count` branches under refs/heads/jgit/, each one new commit on `base`, `tags` annotated and `tags` lightweight tags on them. */
function manyRefsStream(base: string, count: number, tags: number): string {
  const pad = (i: number) => String(i).padStart(3, "0");
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    parts.push(`commit refs/heads/jgit/b${pad(i)}\nmark :${i + 1}\ncommitter Svc Test <test@example.com> ${1_700_000_000 + i} +0000\n`);
    parts.push(data(`branch ${i}\n`), `from ${base}\n`, `M 644 inline jgit/${pad(i)}.txt\n`, data(`file of branch ${i}\n`.repeat(1 + (i % 5))));
  }
  for (let i = 0; i < tags; i++) {
    parts.push(`tag jgit/a${pad(i)}\nfrom :${i + 1}\ntagger Svc Test <test@example.com> ${1_700_100_000 + i} +0000\n`, data(`annotated ${i}\n`));
    parts.push(`reset refs/tags/jgit/l${pad(i)}\nfrom :${count - i}\n\n`);
  }
  parts.push("done\n");
  return parts.join("");
}

beforeAll(async () => {
  if (ABSENT) return;
  ws = sshWorkspace("svc-interop-jgit-ssh-");
  g = gitSandbox("svc-interop-jgit-");
  // JSch 0.1.5x reads PEM private keys only: the keys are made by ssh-keygen and rewritten so.
  key = await ws.keygen("jgit", "ecdsa", 256);
  rsaKey = await ws.keygen("jgit-rsa", "rsa", 3072);
  for (const k of [key, rsaKey]) {
    const pem = await run(["ssh-keygen", "-q", "-p", "-P", "", "-N", "", "-m", "PEM", "-f", k.path], { env: ws.env });
    if (pem.code !== 0) throw new Error(`ssh-keygen -m PEM: ${pem.stderr}`);
  }

  classes = mkdtempSync(join(tmpdir(), "svc-interop-jgit-classes-"));
  const [javac, started] = await Promise.all([run([JAVAC!, "-nowarn", "-encoding", "UTF-8", "-cp", JARS.join(":"), "-d", classes, SOURCE]), startSshServer()]);
  server = started;
  if (javac.code !== 0) throw new Error(`javac InteropJGit.java exited ${javac.code}:\n${javac.stderr}`);

  owner = await sshPerson(server, "io", "jana@example.com", "owner");
  await registerKey(server, owner, "io", key);
  await registerKey(server, owner, "io", rsaKey);
  token = (await mintTokenWithId(server, owner.cookie, "io", { scopes: ["repo:read", "repo:write"], label: "jgit" })).token;

  // JSch checks svc's host key strictly, against the keys in svc's data dir.
  const at = `[${server.sshHost}]:${server.sshPort}`;
  const hostLine = (file: string) => `${at} ${readFileSync(join(server.dataDir, file), "utf8").trim().split(/\s+/).slice(0, 2).join(" ")}\n`;
  knownHosts = join(ws.root, "known_hosts");
  writeFileSync(
    knownHosts,
    readdirSync(server.dataDir)
      .filter((f) => /^ssh_host_\w+_key\.pub$/.test(f))
      .map(hostLine)
      .join(""),
  );

  // C git's server: bare repositories under one root, behind git http-backend with the same
  // Basic credentials svc takes (an authenticated user may push there).
  reference = join(g.root, "cgit");
  mkdirSync(reference);
  backend = startHttpBackend({ root: reference, auth: { username: "x-token", password: token } });

  // One history, pushed by C git to both servers for each transport's pair of repositories.
  work = await initRepo(g);
  await importHistory(g, work, { ref: "refs/heads/main", count: 30 });
  await importHistory(g, work, { ref: "refs/heads/side", count: 3, from: "refs/heads/main~20", label: "side" });
  await g.ok(["tag", "-a", "-m", "version 1", "v1", "main~5"], { cwd: work });
  await g.ok(["tag", "light", "main~10"], { cwd: work });
  for (const transport of ["http", "ssh"] as const) {
    const repo = `jgit-${transport}`;
    await makeRepo(server, owner, "io", repo);
    await g.ok(["init", "-q", "--bare", join(reference, `${repo}.git`)]);
    for (const side of ["svc", "cgit"] as const) await g.ok(["push", "-q", cgitUrl(side, repo), "main", "side", "v1", "light"], { cwd: work });
  }
  await makeRepo(server, owner, "io", "jgit-rsa");
  await g.ok(["push", "-q", cgitUrl("svc", "jgit-rsa"), "main"], { cwd: work });
}, 240_000);

afterAll(async () => {
  // A JGit process still waiting (a push that hung) is ended with the test run.
  for (const p of running) p.kill();
  await server?.stop();
  backend?.stop();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
  if (classes) rmSync(classes, { recursive: true, force: true });
});

type Refs = Record<string, string>;
type FetchUpdates = Record<string, { remote: string; old: string; new: string; result: string }>;
type PushUpdates = Record<string, { status: string; message: string | null }>;

for (const transport of ["http", "ssh"] as const) {
  describe(`JGit over ${transport}`, () => {
    const repo = `jgit-${transport}`;
    /** JGit's clones: from svc, and from C git's server. */
    const clones: Record<Side, string> = { svc: "", cgit: "" };

    jtest("clone: the same refs as from C git's server, and a sound repository", async () => {
      const got: Partial<Record<Side, Refs>> = {};
      for (const side of ["svc", "cgit"] as const) {
        clones[side] = g.path(`jgit-clone-${transport}-${side}`);
        got[side] = (await jgit<{ refs: Refs }>(["clone", jgitUrl(side, transport, repo), clones[side]])).refs;
      }
      expect(got.svc).toEqual(got.cgit!);
      expect(got.svc!["refs/remotes/origin/main"]).toBe(await g.ok(["rev-parse", "main"], { cwd: work }));
      expect(got.svc!["refs/tags/v1"]).toBe(await g.ok(["rev-parse", "v1"], { cwd: work }));
      expect((await fsck(g, clones.svc)).code).toBe(0);
    });

    jtest("fetch: a fast-forward, a new branch, a forced update and a new tag, as from C git's server", async () => {
      // C git moves both servers the same way: main gains commits, feature is new, side is
      // rewritten (forced), v2 is a new annotated tag.
      const branchWork = g.path(`jgit-fetch-${transport}`);
      await g.ok(["clone", "-q", "--mirror", work, branchWork]);
      await importHistory(g, branchWork, { ref: "refs/heads/main", count: 5, from: "refs/heads/main^0", start: 1_650_000_000, label: `more-${transport}` });
      await importHistory(g, branchWork, { ref: "refs/heads/feature", count: 3, from: "refs/heads/main~10", label: `feature-${transport}` });
      const rewritten = await importHistory(g, branchWork, {
        ref: "refs/heads/rewritten",
        count: 2,
        from: "refs/heads/main~25",
        start: 1_660_000_000,
        label: `side2-${transport}`,
      });
      await g.ok(["update-ref", "refs/heads/side", rewritten], { cwd: branchWork });
      await g.ok(["tag", "-a", "-m", "version 2", "v2", "main"], { cwd: branchWork });
      for (const side of ["svc", "cgit"] as const) await g.ok(["push", "-q", "-f", cgitUrl(side, repo), "main", "feature", "side", "v2"], { cwd: branchWork });

      const got: Partial<Record<Side, FetchUpdates>> = {};
      for (const side of ["svc", "cgit"] as const) {
        got[side] = (
          await jgit<{ updates: FetchUpdates }>([
            "fetch",
            clones[side],
            jgitUrl(side, transport, repo),
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tags/*:refs/tags/*",
          ])
        ).updates;
      }
      expect(got.svc).toEqual(got.cgit!);
      const results = Object.fromEntries(Object.entries(got.svc!).map(([name, u]) => [name, u.result]));
      expect(results).toEqual({
        "refs/remotes/origin/main": "FAST_FORWARD",
        "refs/remotes/origin/feature": "NEW",
        "refs/remotes/origin/side": "FORCED",
        "refs/tags/v2": "NEW",
      });
      expect(got.svc!["refs/remotes/origin/main"]!.new).toBe(await g.ok(["rev-parse", "main"], { cwd: branchWork }));
      expect((await fsck(g, clones.svc)).code).toBe(0);
    });

    jtest(`push of ${1 + BRANCHES + 2 * TAGS} refs (a fast-forward, ${BRANCHES} branches, ${2 * TAGS} tags): every ref OK, as on C git's server`, async () => {
      // In JGit's clone from svc: main moves on by a commit, and the many refs are made on it.
      const dir = clones.svc;
      await g.ok(["update-ref", "refs/heads/main", "refs/remotes/origin/main"], { cwd: dir });
      const main = await importHistory(g, dir, {
        ref: "refs/heads/main",
        count: 1,
        from: "refs/heads/main^0",
        start: 1_670_000_000,
        label: `push-${transport}`,
      });
      await g.ok(["fast-import", "--quiet", "--done"], { cwd: dir, input: manyRefsStream(main, BRANCHES, TAGS) });

      const specs = ["refs/heads/main:refs/heads/main", "refs/heads/jgit/*:refs/heads/jgit/*", "refs/tags/jgit/*:refs/tags/jgit/*"];
      const got: Partial<Record<Side, PushUpdates>> = {};
      // Over SSH, JGit waits for the report with its side open: this returns only if svc answers
      // at the pack's checksum.
      for (const side of ["svc", "cgit"] as const)
        got[side] = (await jgit<{ updates: PushUpdates }>(["push", dir, jgitUrl(side, transport, repo), ...specs])).updates;
      expect(got.svc).toEqual(got.cgit!);
      expect(Object.keys(got.svc!).length).toBe(1 + BRANCHES + 2 * TAGS);
      expect(Object.values(got.svc!).filter((u) => u.status !== "OK")).toEqual([]);

      const refs = await advertised(cgitUrl("svc", repo));
      expect(refs).toEqual(await advertised(cgitUrl("cgit", repo)));
      expect(refs["refs/heads/main"]).toBe(main);
      expect(refs["refs/tags/jgit/a000^{}"]).toBe(refs["refs/heads/jgit/b000"]!);
    });

    jtest(`push deleting the ${BRANCHES + 2 * TAGS} refs and forcing side back: every ref OK, as on C git's server`, async () => {
      const dir = clones.svc;
      const names = (await g.ok(["for-each-ref", "--format=%(refname)", "refs/heads/jgit/", "refs/tags/jgit/"], { cwd: dir })).split("\n");
      expect(names.length).toBe(BRANCHES + 2 * TAGS);
      const specs = [...names.map((n) => `:${n}`), "+refs/heads/main~3:refs/heads/side"];
      const got: Partial<Record<Side, PushUpdates>> = {};
      for (const side of ["svc", "cgit"] as const)
        got[side] = (await jgit<{ updates: PushUpdates }>(["push", dir, jgitUrl(side, transport, repo), ...specs])).updates;
      expect(got.svc).toEqual(got.cgit!);
      expect(Object.keys(got.svc!).length).toBe(BRANCHES + 2 * TAGS + 1);
      expect(Object.values(got.svc!).filter((u) => u.status !== "OK")).toEqual([]);

      const refs = await advertised(cgitUrl("svc", repo));
      expect(refs).toEqual(await advertised(cgitUrl("cgit", repo)));
      expect(Object.keys(refs).filter((n) => n.includes("/jgit/"))).toEqual([]);
      expect(refs["refs/heads/side"]).toBe(await g.ok(["rev-parse", "main~3"], { cwd: dir }));
    });
  });
}

describe("JGit over ssh with an RSA user key", () => {
  jtest("clone: JSch signs with ssh-rsa (SHA-1) and svc takes it", async () => {
    const dir = g.path("jgit-rsa");
    const got = await jgit<{ refs: Refs }>(["clone", jgitUrl("svc", "ssh", "jgit-rsa"), dir], { key: rsaKey });
    expect(got.refs["refs/remotes/origin/main"]).toBe(await g.ok(["rev-parse", "main"], { cwd: work }));
  });
});
