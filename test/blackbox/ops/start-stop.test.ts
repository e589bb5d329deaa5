// Starting and stopping as an operator meets it (issue 18): a busy HTTP or SSH port is one line
// naming the setting and exit 2; `npm start` leaves no orphaned server when npm gets SIGTERM;
// `npm run build` installs first; `svc serve --help` points at the settings; no colour codes
// when help is not read on a terminal.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SETTINGS } from "../../../src/config.ts";
import { ROOT, cleanEnv, runSvc, startServer, tempDir } from "../../helpers/server.ts";

/** The non-empty lines of a text. */
const lines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");

/** Holds a TCP port on 127.0.0.1 until disposed. */
function holdPort(): { port: number; [Symbol.dispose](): void } {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  return { port: s.port, [Symbol.dispose]: () => s.stop(true) };
}

describe("a busy port is a configuration error", () => {
  test("HTTP: exit 2, one stderr line naming SVC_HTTP_ADDR and the address", async () => {
    using busy = holdPort();
    using data = tempDir("svc-busy-http-");
    const r = await runSvc(["serve"], { SVC_DATA_DIR: data.path, SVC_HTTP_ADDR: `127.0.0.1:${busy.port}` });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain("SVC_HTTP_ADDR");
    expect(r.stderr).toContain(`127.0.0.1:${busy.port}`);
    expect(r.stderr).toContain("in use");
    expect(r.stdout).not.toContain("listening");
  }, 20_000);

  test("HTTP via --addr: the same one line", async () => {
    using busy = holdPort();
    using data = tempDir("svc-busy-addr-");
    const r = await runSvc(["serve", "--addr", `127.0.0.1:${busy.port}`], { SVC_DATA_DIR: data.path });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain("in use");
  }, 20_000);

  test("SSH: exit 2, one stderr line naming SVC_SSH_ADDR", async () => {
    using busy = holdPort();
    using data = tempDir("svc-busy-ssh-");
    const http = holdPort();
    const httpPort = http.port;
    http[Symbol.dispose]();
    const r = await runSvc(["serve"], { SVC_DATA_DIR: data.path, SVC_HTTP_ADDR: `127.0.0.1:${httpPort}`, SVC_SSH_ADDR: `127.0.0.1:${busy.port}` });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain("SVC_SSH_ADDR");
    expect(r.stderr).toContain(`127.0.0.1:${busy.port}`);
    expect(r.stdout).not.toContain("listening");
  }, 30_000);

  test("a second server on the same port as a running one", async () => {
    await using first = await startServer();
    const port = new URL(first.url).port;
    const r = await runSvc(["serve"], { SVC_DATA_DIR: first.dataDir, SVC_HTTP_ADDR: `127.0.0.1:${port}` });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain("SVC_HTTP_ADDR");
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  }, 30_000);
});

describe("npm scripts", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

  test("npm start execs the server: SIGTERM to npm stops the server too (no orphan)", async () => {
    using data = tempDir("svc-npm-start-");
    // --ignore-scripts skips prestart (install.sh) only; the start script itself runs.
    const npm = Bun.spawn(["npm", "start", "--ignore-scripts", "--silent"], {
      cwd: ROOT,
      env: {
        ...cleanEnv(),
        SVC_DATA_DIR: data.path,
        SVC_HTTP_ADDR: "127.0.0.1:0",
        SVC_LOG: "warn",
        PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH}`,
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = (npm.stdout as ReadableStream<Uint8Array>).getReader();
    let out = "";
    let url: string | null = null;
    while (!url) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`npm start ended before listening: ${out} ${await new Response(npm.stderr).text()}`);
      out += new TextDecoder().decode(value);
      url = /listening http=(\S+)/.exec(out)?.[1] ?? null;
    }
    reader.releaseLock();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    npm.kill("SIGTERM");
    await npm.exited;
    // The server drains and exits; it must stop answering (poll with a deadline, no sleep-and-hope).
    const deadline = Date.now() + 15_000;
    let answering = true;
    while (answering && Date.now() < deadline) {
      answering = await fetch(`${url}/healthz`).then(
        () => true,
        () => false,
      );
      if (answering) await Bun.sleep(100);
    }
    expect(answering).toBe(false);
  }, 60_000);

  test("the start script execs (so the shell npm runs is replaced, not a parent that dies alone)", () => {
    expect(pkg.scripts.start).toMatch(/^exec /);
  });

  test("npm run build installs what it needs first (prebuild runs install.sh)", () => {
    expect(pkg.scripts.prebuild).toBe("sh install.sh");
    expect(pkg.scripts.prestart).toBe("sh install.sh");
  });
});

describe("help", () => {
  test("svc serve --help prints every setting with its default (issue 24: someone with only the binary has no README)", async () => {
    const r = await runSvc(["serve", "--help"], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("SETTINGS");
    expect(r.stdout).not.toContain("README");
    const row = (name: string) =>
      r.stdout
        .split("\n")
        .find((l) => l.trimStart().startsWith(`${name} `))
        ?.trim()
        .split(/\s{2,}/);
    expect(row("SVC_DATA_DIR")?.slice(0, 2)).toEqual(["SVC_DATA_DIR", "./data"]);
    expect(row("SVC_HTTP_ADDR")?.slice(0, 2)).toEqual(["SVC_HTTP_ADDR", "127.0.0.1:8080"]);
    expect(row("SVC_GIT_MAX_PUSH")?.slice(0, 2)).toEqual(["SVC_GIT_MAX_PUSH", "2g"]);
    expect(row("SVC_RUNNER_CLAIM_WAIT_MS")?.slice(0, 2)).toEqual(["SVC_RUNNER_CLAIM_WAIT_MS", "20000"]);
    for (const v of SETTINGS) expect({ v, row: row(v)?.length ?? 0 }).toEqual({ v, row: 3 });
  }, 20_000);

  test("help read through a pipe has no colour codes", async () => {
    for (const args of [["--help"], ["serve", "--help"], ["fsck", "--help"], ["backup", "--help"]]) {
      const r = await runSvc(args, { TERM: "xterm-256color" });
      expect(r.code).toBe(0);
      expect(r.stdout + r.stderr).not.toContain("\u001b[");
    }
  }, 30_000);
});
