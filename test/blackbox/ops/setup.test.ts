// Setup friction (issue 24 item 7), each as a newcomer meets it: `npm test` installing Debian
// packages while unattended upgrades hold the dpkg lock (scripts/apt-install.sh waits and says who
// holds it); Bun's default test timeout, which bunfig.toml cannot set (test/preload.ts does);
// `sh install.sh --build` putting `svc` on PATH; `svc user-create` taking the password from stdin
// or a terminal prompt instead of the command line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BUN, ROOT, cleanEnv, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";

/** Runs a command; answers exit code and output. */
async function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}) {
  const p = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: opts.env ?? cleanEnv(),
    stdin: opts.input === undefined ? "ignore" : new TextEncoder().encode(opts.input),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

describe("scripts/apt-install.sh and the dpkg lock", () => {
  const python = Bun.which("python3");
  let dir: ReturnType<typeof tempDir>;
  let bin: string;
  beforeAll(() => {
    dir = tempDir("svc-apt-");
    bin = join(dir.path, "bin");
    mkdirSync(bin);
    // Stand-ins: the package is missing, apt-get records its arguments, sudo just runs.
    const tool = (name: string, body: string) => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    tool("dpkg-query", "exit 1");
    tool("apt-get", `echo "$*" >> "${join(dir.path, "calls")}"; [ -z "\${APT_FAIL:-}" ]`);
    tool("sudo", 'exec "$@"');
  });
  afterAll(() => dir?.[Symbol.dispose]());
  const script = (env: Record<string, string> = {}) =>
    run(["sh", join(ROOT, "scripts/apt-install.sh"), "the tests", "somepkg"], {
      env: { ...cleanEnv(), PATH: `${bin}:${process.env.PATH}`, DPKG_LOCK_FRONTEND: join(dir.path, "lock-frontend"), ...env },
    });

  test("a free lock: installs with a bounded wait for the lock, and says what it installs", async () => {
    writeFileSync(join(dir.path, "lock-frontend"), "");
    const r = await script();
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("svc: installing Debian's somepkg for the tests\n");
    expect(readFileSync(join(dir.path, "calls"), "utf8")).toContain("-o DPkg::Lock::Timeout=600 -y --no-install-recommends install somepkg");
  });

  test.skipIf(!python)("a held lock: says it waits, how long, and which process holds it", async () => {
    // python3 takes the lock as dpkg does (a POSIX fcntl lock) and holds it until its stdin closes.
    const holder = Bun.spawn(
      [
        python!,
        "-c",
        `import fcntl,sys\nf=open(${JSON.stringify(join(dir.path, "lock-frontend"))},"w")\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint("held", flush=True)\nsys.stdin.read()`,
      ],
      { stdin: "pipe", stdout: "pipe" },
    );
    try {
      const reader = (holder.stdout as ReadableStream<Uint8Array>).getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain("held");
      const r = await script({ SVC_APT_LOCK_WAIT_S: "42" });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`svc: waiting up to 42s for the dpkg lock, held by process ${holder.pid} (python3)`);
    } finally {
      holder.stdin.end();
      await holder.exited;
    }
  });

  test("apt-get failing still after the wait: one line saying what to do, exit 1", async () => {
    const r = await script({ APT_FAIL: "1" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("svc: could not install somepkg for the tests");
    expect(r.stderr).toContain("SVC_APT_LOCK_WAIT_S");
  });
});

describe("the test timeout", () => {
  test("bun test in this checkout gives a test and its hooks more than Bun's 5 s default (README's commands work as written)", async () => {
    using d = tempDir("svc-timeout-");
    const file = join(d.path, "slow.test.ts");
    // Not a timed assertion: the subject is the configured default itself, which only a test
    // running past 5 s can show.
    // Two files: Bun applies setDefaultTimeout() per file, so a default set once would cover only the first.
    writeFileSync(file, 'import { beforeAll, test } from "bun:test";\nbeforeAll(() => Bun.sleep(5_500));\ntest("slow", () => Bun.sleep(5_500));\n');
    writeFileSync(join(d.path, "slow2.test.ts"), 'import { test } from "bun:test";\ntest("slow too", () => Bun.sleep(5_500));\n');
    const r = await run([BUN, "test", file, join(d.path, "slow2.test.ts")], { cwd: ROOT });
    expect({ code: r.code, out: r.code === 0 ? "" : r.stdout + r.stderr }).toEqual({ code: 0, out: "" });
    expect(readFileSync(join(ROOT, "bunfig.toml"), "utf8")).toContain('preload = ["./test/preload.ts"]');
  }, 60_000);
});

describe("sh install.sh --build", () => {
  test("builds dist/svc and installs it as ~/.local/bin/svc, saying so and how to put it on PATH", async () => {
    using home = tempDir("svc-home-");
    const env = { ...cleanEnv(), HOME: home.path, PATH: `${dirname(BUN)}:/usr/bin:/bin` };
    const r = await run(["sh", "install.sh", "--build"], { cwd: ROOT, env });
    expect({ code: r.code, err: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, err: "" });
    const installed = join(home.path, ".local", "bin", "svc");
    expect(existsSync(installed)).toBe(true);
    expect(statSync(installed).mode & 0o777).toBe(0o755);
    expect(r.stderr).toContain(`svc: installed ${installed}`);
    expect(r.stderr).toContain(`${join(home.path, ".local", "bin")} is not on your PATH`);
    const v = await run([installed, "version"], { env });
    expect(v.stdout).toStartWith("svc ");
    // With the directory on PATH, nothing more to say; --bin-dir picks another directory.
    const other = join(home.path, "bin");
    const again = await run(["sh", "install.sh", "--build", "--bin-dir", other], { cwd: ROOT, env: { ...env, PATH: `${other}:${env.PATH}` } });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`svc: installed ${join(other, "svc")}`);
    expect(again.stderr).not.toContain("not on your PATH");
  }, 300_000);
});

describe("svc user-create and the password", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => server?.[Symbol.asyncDispose]());
  const login = async (email: string, password: string) =>
    (await fetch(`${server.url}/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) }))
      .status;
  const args = (email: string) => [BUN, join(ROOT, "src/main.ts"), "user-create", "--org", "acme", "--email", email, "--name", "N", "--role", "member"];

  test("--password-stdin reads the first line of stdin", async () => {
    const r = await run([...args("stdin@acme.example"), "--password-stdin"], {
      env: { ...cleanEnv(), ...server.env },
      input: "a password from stdin\nignored\n",
    });
    expect({ code: r.code, err: r.stderr }).toEqual({ code: 0, err: "" });
    expect(await login("stdin@acme.example", "a password from stdin")).toBe(200);
  });

  test("without a password and without a terminal: exit 2 saying how to give one", async () => {
    const r = await run(args("none@acme.example"), { env: { ...cleanEnv(), ...server.env }, input: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--password-stdin");
  });

  test.skipIf(!Bun.which("script"))("on a terminal it asks twice without echoing", async () => {
    // script(1) gives the command a pseudo-terminal; each answer is typed after its prompt shows.
    const cmd = args("tty@acme.example")
      .map((a) => `'${a}'`)
      .join(" ");
    const p = Bun.spawn(["script", "-q", "-e", "-c", cmd, "/dev/null"], {
      env: { ...cleanEnv(), ...server.env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const seen = new Set<() => void>();
    void (async () => {
      for await (const c of p.stdout as ReadableStream<Uint8Array>) {
        out += new TextDecoder().decode(c);
        for (const w of seen) w();
      }
    })();
    const shown = (s: string) =>
      new Promise<void>((resolve) => {
        const check = () => out.includes(s) && (seen.delete(check), resolve());
        seen.add(check);
        check();
      });
    await shown("Password (at least 12 characters): ");
    p.stdin.write("typed on a terminal\r");
    await p.stdin.flush();
    await shown("Password again: ");
    p.stdin.write("typed on a terminal\r");
    await p.stdin.flush();
    expect(await p.exited).toBe(0);
    expect(out).not.toContain("typed on a terminal");
    expect(out).toContain('"email":"tty@acme.example"');
    expect(await login("tty@acme.example", "typed on a terminal")).toBe(200);
  });

  test("--password still works", async () => {
    const r = await run([...args("flag@acme.example"), "--password", "given as a flag"], { env: { ...cleanEnv(), ...server.env } });
    expect(r.code).toBe(0);
    expect(await login("flag@acme.example", "given as a flag")).toBe(200);
  });
});
