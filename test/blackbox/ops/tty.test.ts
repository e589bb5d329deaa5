// Colours and progress only on a terminal (issue 18): the same commands run under a pseudo
// terminal (util-linux `script`) show a progress bar and colours; through a pipe, neither;
// NO_COLOR turns colours off on a terminal too. Skipped, saying so, where `script` is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT, cleanEnv, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";
import { commitFiles, createRepo, gitSandbox, initRepo, repoUrl, setupOwner, type GitSandbox } from "../../helpers/git.ts";

const SCRIPT = Bun.which("script");
const ESC = "\u001b[";

/** Runs `svc <args>` under a pseudo terminal; answers everything it printed (stdout and stderr share the terminal). */
async function onTerminal(server: RunningServer, args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const command = [BUN, join(ROOT, "src/main.ts"), ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const p = Bun.spawn([SCRIPT!, "-qec", command, "/dev/null"], {
    env: { ...cleanEnv(), ...server.env, TERM: "xterm-256color", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  return { code, out };
}

describe.skipIf(!SCRIPT)("on a terminal", () => {
  let server: RunningServer;
  let g: GitSandbox;
  beforeAll(async () => {
    server = await startServer();
    g = gitSandbox();
    const owner = await setupOwner(server, "tty");
    await createRepo(server, owner, "repo");
    const dir = await initRepo(g);
    await commitFiles(g, dir, { "a.txt": "a\n" });
    await g.ok(["push", "-q", repoUrl(server, "tty", "repo", owner.token), "main"], { cwd: dir });
  }, 60_000);
  afterAll(async () => {
    g?.[Symbol.dispose]();
    await server?.[Symbol.asyncDispose]();
  });

  test("fsck draws a progress bar and colours its verdict; piped, it does neither", async () => {
    const tty = await onTerminal(server, ["fsck"]);
    expect(tty.code).toBe(0);
    expect(tty.out).toContain("\r\u001b[Kfsck [");
    expect(tty.out).toContain(`${ESC}32mok${ESC}39m`);
    const piped = await server.cli(["fsck"]);
    expect(piped.code).toBe(0);
    expect(piped.stdout + piped.stderr).not.toContain(ESC);
    expect(piped.stdout + piped.stderr).not.toContain("\r");
    expect(piped.stdout).toContain("tty/repo: ok");
  }, 60_000);

  test("NO_COLOR keeps the terminal output free of colours", async () => {
    const tty = await onTerminal(server, ["fsck"], { NO_COLOR: "1" });
    expect(tty.code).toBe(0);
    expect(tty.out).toContain("tty/repo: ok");
    expect(tty.out).not.toContain(`${ESC}32m`);
  }, 60_000);

  test("backup shows its progress bar on a terminal", async () => {
    using target = tempDir("svc-tty-backup-");
    const tty = await onTerminal(server, ["backup", "--to", join(target.path, "b")]);
    expect(tty.code).toBe(0);
    expect(tty.out).toContain("\r\u001b[Kbackup [");
  }, 60_000);
});

if (!SCRIPT) test("terminal checks: skipped (util-linux `script` is not installed)", () => void console.warn("tty.test.ts skipped: no `script` command"));
