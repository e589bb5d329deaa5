// The SSH host keys in `node_secrets` (issue 27, plan-27 §2 #14; services/ops/host-keys.ts): a
// set saved by `svc migrate-db` is what every node reads; the first node creates missing keys
// and the others read them, also when several start at once; nothing but host keys is stored.
import { afterAll, describe, expect, test } from "bun:test";
import { openPg } from "../../src/db/pg/client.ts";
import { HOST_KEY_NAMES, type HostKeySecret, readHostKeyFiles, saveHostKeys, sharedHostKeys } from "../../src/services/ops/host-keys.ts";
import * as store from "../../src/services/ops/store.ts";
import { generateEd25519 } from "../../src/ssh/openssh-key.ts";
import { describeBoth, openTestDb, type TestDb } from "../helpers/db.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const NAMES = Object.values(HOST_KEY_NAMES);
/** A private key text per name (ed25519 for both: the store does not care which kind a key is). */
const keySet = (): HostKeySecret[] => NAMES.map((name) => ({ name, private: generateEd25519().private }));
const never = (): string => {
  throw new Error("generated although the keys are stored");
};
const asMap = (keys: HostKeySecret[]) => Object.fromEntries(keys.map((k) => [k.name, k.private]));

describeBoth("host keys in node_secrets", (_dialect, open) => {
  test("a saved set is what sharedHostKeys answers; saving again replaces it", async () => {
    const { db } = await open();
    const first = keySet();
    await saveHostKeys(db, first);
    expect(asMap(await sharedHostKeys(db, never))).toEqual(asMap(first));
    const second = keySet();
    await saveHostKeys(db, second);
    expect(asMap(await sharedHostKeys(db, never))).toEqual(asMap(second));
  });

  test("refuses other names and values that are not private keys, without echoing the value", async () => {
    const { db } = await open();
    const secret = "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0\n";
    await expect(saveHostKeys(db, [{ name: "api_token", private: secret }])).rejects.toThrow("not a host key name");
    const refused = await saveHostKeys(db, [{ name: HOST_KEY_NAMES.rsa, private: "ssh-ed25519 AAAA… public" }]).catch((e: Error) => e);
    expect(String(refused)).toContain("not a private key");
    expect(String(refused)).not.toContain("AAAA");
    const other = await saveHostKeys(db, [{ name: "x", private: secret }]).catch((e: Error) => e);
    expect(String(other)).not.toContain("c2VjcmV0");
  });
});

describeBoth("host keys created on first use", (_dialect, open) => {
  test("missing keys are generated once, then read", async () => {
    const { db } = await open();
    const generated: string[] = [];
    const created = await sharedHostKeys(db, (name) => {
      generated.push(name);
      return generateEd25519().private;
    });
    expect(generated.sort()).toEqual([...NAMES].sort());
    expect(created.map((k) => k.name)).toEqual(NAMES);
    expect(asMap(await sharedHostKeys(db, never))).toEqual(asMap(created));
  });
});

describeBoth("host keys: one stored, one missing", (_dialect, open) => {
  test("only the missing one is generated; the stored one stays", async () => {
    const { db } = await open();
    const [ed] = keySet();
    await db.transaction(async (tx) => {
      await store.putNodeSecrets(tx, [{ name: ed!.name, value: ed!.private }], Date.now(), { replace: false });
    });
    const generated: string[] = [];
    const keys = await sharedHostKeys(db, (name) => {
      generated.push(name);
      return generateEd25519().private;
    });
    expect(generated).toEqual([HOST_KEY_NAMES.rsa]);
    expect(asMap(keys)[ed!.name]).toBe(ed!.private);
  });
});

describe("host keys: several nodes start at once [pg]", () => {
  const opened: TestDb[] = [];
  afterAll(async () => {
    for (const t of opened) await t.close();
  });

  test("every node answers the one set that was stored", async () => {
    const base = await openTestDb("pg");
    opened.push(base);
    const nodes = [0, 1, 2, 3].map(() => openPg({ url: base.url!, name: base.name!, pool: 2 }));
    try {
      const answers = await Promise.all(nodes.map((n) => sharedHostKeys(n.db, () => generateEd25519().private)));
      for (const a of answers) expect(asMap(a)).toEqual(asMap(answers[0]!));
      const stored = await store.nodeSecretValues(base.db.read, NAMES);
      expect(Object.fromEntries(stored)).toEqual(asMap(answers[0]!));
    } finally {
      for (const n of nodes) await n.close();
    }
  });
});

describe("readHostKeyFiles", () => {
  test("reads the key files present in a data dir, by name", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-hostkey-files-"));
    try {
      expect(readHostKeyFiles(dir)).toEqual([]);
      const ed = generateEd25519();
      writeFileSync(join(dir, HOST_KEY_NAMES.ed25519), ed.private);
      writeFileSync(join(dir, `${HOST_KEY_NAMES.ed25519}.pub`), ed.public);
      expect(readHostKeyFiles(dir)).toEqual([{ name: HOST_KEY_NAMES.ed25519, private: ed.private }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
