// `svc serve --help` describes every setting svc reads, with its default (issue 24 item 7), and the
// README's Configuration table names the same variables: adding a setting means a line in
// cli/settings-help.ts and a row in README.md.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SETTING_HELP, settingsHelp } from "../../../cli/settings-help.ts";
import { SETTINGS } from "../../../src/config.ts";

const ROOT = join(import.meta.dir, "../../..");

test("every setting has a help line with a default and a meaning, and no line names an unknown setting", () => {
  const described = SETTING_HELP.map(([n]) => n);
  expect([...described].sort()).toEqual([...SETTINGS].sort());
  for (const [name, def, meaning] of SETTING_HELP)
    expect({ name, def: def.length > 0, meaning: meaning.length > 0 }).toEqual({ name, def: true, meaning: true });
  expect(settingsHelp().split("\n").length).toBeGreaterThan(SETTINGS.length);
});

test("the README's Configuration table lists the same variables", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1));
  const named = new Set(
    [...table.matchAll(/^\| ([A-Z0-9_, ]+) \|/gm)].flatMap((m) => m[1]!.split(",").map((s) => s.trim())).filter((s) => s.startsWith("SVC_")),
  );
  expect([...named].sort()).toEqual([...SETTINGS].sort());
});
