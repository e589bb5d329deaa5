// The `svc` command line (citty): serve, user-create, migrate, version.
import { defineCommand, runMain } from "citty";
import pkg from "../package.json" with { type: "json" };
import { AppError } from "../src/errors.ts";
import { openDatabase as openConfiguredDatabase } from "../src/db/open.ts";
import { openContext, serve } from "../src/runtime.ts";
import { createUserWithOrg } from "../src/services/people/accounts.ts";
import { findOrg, findRepo } from "../src/services/access/lookup.ts";
import { allRepos, gcRepo, sweepRepo } from "../src/services/git/maintenance.ts";
import { configOrExit, exitOnConfigError } from "./config.ts";
import { createHostedRegistrationToken } from "../src/services/ci/runners.ts";
import { DEFAULT_CONFIG, register, runAgent } from "./runner/agent.ts";
import { promptSecret, readStdinLine, showUsage, usageFooters } from "./tty.ts";
import { settingsHelp } from "./settings-help.ts";
import { backupCmd, restoreCmd } from "./backup.ts";
import { fsckCmd } from "./fsck.ts";

const serveCmd = defineCommand({
  meta: {
    name: "serve",
    description: "Start the HTTP API, git smart-HTTP, SSH (when SVC_SSH_ADDR is set) and background workers; settings are environment variables (below)",
  },
  args: {
    addr: { type: "string", description: "HTTP listen address host:port (overrides SVC_HTTP_ADDR)" },
    "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" },
  },
  async run({ args }) {
    const config = configOrExit({ SVC_HTTP_ADDR: args.addr, SVC_DATA_DIR: args["data-dir"] });
    // A busy or forbidden port is a configuration error too: one line naming the setting, exit 2.
    await serve(config).catch(exitOnConfigError);
    process.exit(0);
  },
});
usageFooters.set(serveCmd, settingsHelp());

/**
 * The new account's password: --password, or the first line of stdin with --password-stdin, or
 * asked for twice on the terminal (not echoed). Why not only --password: a command line is
 * visible to every user in `ps` and stays in shell history.
 */
async function passwordOf(args: { password?: string; "password-stdin"?: boolean }): Promise<string> {
  const fail = (why: string): never => {
    process.stderr.write(`svc: ${why}\n`);
    process.exit(2);
  };
  if (args.password !== undefined && args["password-stdin"]) fail("give --password or --password-stdin, not both");
  if (args.password !== undefined) return args.password;
  if (args["password-stdin"]) return readStdinLine();
  if (!process.stdin.isTTY) fail("no password: give --password-stdin (the password on the first line of stdin), or run on a terminal to be asked");
  const first = await promptSecret("Password (at least 12 characters): ");
  if (first === null) fail("no password given");
  const again = await promptSecret("Password again: ");
  if (again !== first) fail("the passwords differ");
  return first!;
}

const userCreateCmd = defineCommand({
  meta: {
    name: "user-create",
    description:
      "Create a confirmed account, its org (if missing) and the membership; prints the user as JSON. The password is asked for on a terminal, or read with --password-stdin",
  },
  args: {
    org: { type: "string", required: true, description: "Organization name (created if missing)" },
    email: { type: "string", required: true, description: "Sign-in address (confirmed)" },
    name: { type: "string", required: true, description: "Display name" },
    password: { type: "string", description: "Password (at least 12 characters); visible to ps and shell history, so prefer the prompt or --password-stdin" },
    "password-stdin": { type: "boolean", description: "Read the password from the first line of stdin" },
    role: { type: "string", default: "owner", description: "owner, admin, member or viewer" },
    handle: { type: "string", description: "Personal namespace (default: derived from the address)" },
    "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" },
  },
  async run({ args }) {
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    const password = await passwordOf(args);
    const ctx = await openContext(config);
    try {
      const user = await createUserWithOrg(ctx, { org: args.org, email: args.email, name: args.name, password, role: args.role, handle: args.handle });
      process.stdout.write(
        `${JSON.stringify({ id: user.id, handle: user.handle, email: user.email, name: user.name, created_at: user.createdAt, org: args.org.toLowerCase(), role: args.role })}\n`,
      );
    } catch (e) {
      if (e instanceof AppError) {
        process.stderr.write(`svc: ${e.message}\n`);
        process.exit(1);
      }
      throw e;
    } finally {
      ctx.close();
    }
  },
});

const migrateCmd = defineCommand({
  meta: { name: "migrate", description: "Apply pending database migrations and exit" },
  args: { "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" } },
  async run({ args }) {
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    // SQLite in the data dir, or PostgreSQL (SVC_DATABASE_URL): migrated as `svc serve` does at start.
    const { applied, close } = await openConfiguredDatabase(config).catch(exitOnConfigError);
    close();
    process.stdout.write(applied.length ? `applied ${applied.join(", ")}\n` : "up to date\n");
  },
});

const migrateDbCmd = defineCommand({
  meta: {
    name: "migrate-db",
    description:
      "Move this stopped SQLite installation's metadata into an empty PostgreSQL database (verified row counts and key checksums, one transaction); objects stay where they are",
  },
  args: {
    to: { type: "string", required: true, description: "postgres://user:password@host:5432/database (PostgreSQL 14+, an existing empty database)" },
    "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" },
  },
  async run({ args }) {
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    const { runMigrateDb } = await import("./migrate-db.ts");
    process.exit(await runMigrateDb(config, args.to));
  },
});

const gcCmd = defineCommand({
  meta: { name: "gc", description: "Repack each repository into one pack of everything reachable; delete replaced packs past their grace period" },
  args: {
    repo: { type: "string", description: "Only this repository (org/name)" },
    "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" },
  },
  async run({ args }) {
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    const ctx = await openContext(config);
    try {
      let targets: { id: string; name: string }[];
      if (args.repo) {
        const [orgName, repoName] = args.repo.split("/");
        const org = orgName ? await findOrg(ctx, orgName) : null;
        const repo = org && repoName ? await findRepo(ctx, org.id, repoName) : null;
        if (!org || !repo) {
          process.stderr.write(`svc: no repository ${args.repo}\n`);
          process.exit(1);
        }
        targets = [{ id: repo.id, name: `${org.name}/${repo.name}` }];
      } else {
        targets = await allRepos(ctx);
      }
      for (const t of targets) {
        const gc = await gcRepo(ctx, { repoId: t.id });
        const deleted = await sweepRepo(ctx, { repoId: t.id });
        process.stdout.write(`${JSON.stringify({ repo: t.name, objects: gc.objects, packs_replaced: gc.packsReplaced, files_deleted: deleted })}\n`);
      }
    } finally {
      ctx.close();
    }
  },
});

const sshHostKeysCmd = defineCommand({
  meta: { name: "ssh-host-keys", description: "Print the SSH host key fingerprints (generating the keys if missing)" },
  args: { "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" } },
  async run({ args }) {
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    const { loadHostKeys, nodeHostKeys } = await import("../src/ssh/host-keys.ts");
    // On PostgreSQL the keys every node presents are in the database (node_secrets).
    const opened = config.database ? await openConfiguredDatabase(config).catch(exitOnConfigError) : null;
    try {
      const keys = opened ? await nodeHostKeys(opened.db, config.dataDir) : loadHostKeys(config.dataDir);
      for (const k of keys) process.stdout.write(`${k.type} ${k.fingerprint}\n`);
    } finally {
      opened?.close();
    }
  },
});

const runnerRegisterCmd = defineCommand({
  meta: { name: "register", description: "Register this machine as a runner; stores its credential (mode 0600)" },
  args: {
    url: { type: "string", required: true, description: "Base address of the svc server" },
    token: { type: "string", required: true, description: "Registration token (svcg_…)" },
    name: { type: "string", description: "Machine name (default: the host name)" },
    labels: { type: "string", description: "Custom labels, comma-separated" },
    ephemeral: { type: "boolean", description: "Run one job, then de-register" },
    config: { type: "string", default: DEFAULT_CONFIG, description: "Where to store the credential" },
  },
  async run({ args }) {
    try {
      const c = await register({
        url: args.url,
        token: args.token,
        name: args.name,
        labels: args.labels,
        ephemeral: args.ephemeral,
        configPath: args.config,
        version: pkg.version,
      });
      process.stdout.write(
        `registered runner ${c.name} (${c.runner_id})${c.org ? ` in ${c.org}, group ${c.group}` : " for the instance (hosted)"} with labels ${c.labels.join(",")}; credential stored in ${args.config}\n`,
      );
    } catch (e) {
      process.stderr.write(`svc: ${(e as Error).message}\n`);
      process.exit(1);
    }
  },
});

const runnerRunCmd = defineCommand({
  meta: { name: "run", description: "Claim and run jobs until stopped (an ephemeral runner exits after its one job)" },
  args: {
    config: { type: "string", default: DEFAULT_CONFIG, description: "The credential file written by register" },
    workdir: { type: "string", description: "Where job workspaces are made (default: _work beside the config)" },
  },
  async run({ args }) {
    let code: number;
    try {
      code = await runAgent({ configPath: args.config, workdir: args.workdir });
    } catch (e) {
      process.stderr.write(`svc: ${(e as Error).message}\n`);
      code = 1;
    }
    process.exit(code);
  },
});

const runnerCmd = defineCommand({
  meta: { name: "runner", description: "The runner agent: register a machine, run jobs" },
  subCommands: { register: runnerRegisterCmd, run: runnerRunCmd },
});

const runnerTokenCmd = defineCommand({
  meta: { name: "runner-token", description: "Mint a registration token for an instance-wide (hosted) runner" },
  args: {
    hosted: { type: "boolean", required: true, description: "An instance runner that takes hosted jobs of every org" },
    "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" },
  },
  async run({ args }) {
    if (!args.hosted) {
      process.stderr.write("svc: only --hosted tokens are minted here; an org's runners get theirs from POST /v1/orgs/{org}/runners/registration-token\n");
      process.exit(2);
    }
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    const ctx = await openContext(config);
    try {
      process.stdout.write(`${JSON.stringify(await createHostedRegistrationToken(ctx))}\n`);
    } finally {
      ctx.close();
    }
  },
});

const versionCmd = defineCommand({
  meta: { name: "version", description: "Print the version" },
  run() {
    process.stdout.write(`svc ${pkg.version}\n`);
  },
});

/** The root command. */
export const main = defineCommand({
  meta: { name: "svc", version: pkg.version, description: "A self-hosted git host on object storage" },
  subCommands: {
    serve: serveCmd,
    "user-create": userCreateCmd,
    migrate: migrateCmd,
    "migrate-db": migrateDbCmd,
    gc: gcCmd,
    "ssh-host-keys": sshHostKeysCmd,
    runner: runnerCmd,
    "runner-token": runnerTokenCmd,
    version: versionCmd,
    backup: backupCmd,
    restore: restoreCmd,
    fsck: fsckCmd,
  },
});

/** Runs the CLI with the given arguments. */
export async function runCli(argv: string[]): Promise<void> {
  await runMain(main, { rawArgs: argv, showUsage });
}
