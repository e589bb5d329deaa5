// The "Run workflow" forms (src/http/web/ci/dispatch-form.ts): inputs drawn by type with their
// defaults, required ones marked, a refusal drawn back into its own workflow's form, and the posted
// inputs read back (an unticked checkbox as false; hostile names kept as names).
import { describe, expect, test } from "bun:test";
import { dispatchBox, postedInputs } from "../../../../src/http/web/ci/dispatch-form.ts";
import type { DispatchableWorkflow } from "../../../../src/services/ci/dispatch.ts";
import type { RepoBody } from "../../../../src/services/repos/repos.ts";

const repo = { org: "acme", name: "app", default_branch: "main" } as RepoBody;
const deploy: DispatchableWorkflow = {
  path: ".svc/workflows/deploy.yml",
  file: "deploy.yml",
  name: "Deploy <prod>",
  inputs: [
    { name: "target", description: "where to <deploy>", required: true, type: "string", default: "staging", options: null },
    { name: "dry", description: null, required: false, type: "boolean", default: true, options: null },
    { name: "level", description: null, required: false, type: "choice", default: "info", options: ["debug", "info"] },
  ],
};
const other: DispatchableWorkflow = { path: ".svc/workflows/other.yml", file: "other.yml", name: null, inputs: [] };

describe("the Run workflow box", () => {
  test("nothing without a dispatchable workflow", () => {
    expect(dispatchBox(repo, [], ["main"], "tok", null).value).toBe("");
  });

  test("each input by type with its default, required marked, all escaped; the default branch selected", () => {
    const t = dispatchBox(repo, [deploy, other], ["dev", "main"], "tok", null).value;
    expect(t).toContain(`<summary>Run Deploy &lt;prod&gt; <span class="muted">deploy.yml</span></summary>`);
    expect(t).toContain(`<summary>Run other.yml</summary>`);
    expect(t).toContain(`<option value="main" selected>main</option>`);
    expect(t).toContain(
      `<label>target <span class="required">(required)</span> <input type="text" name="input.target" value="staging" required aria-describedby="dispatch-0-0-hint"></label>`,
    );
    expect(t).toContain(`id="dispatch-0-0-hint">where to &lt;deploy&gt;</span>`);
    expect(t).toContain(`<input type="checkbox" name="input.dry" value="true" checked>`);
    expect(t).toContain(`<option value="info" selected>info</option>`);
    expect(t).toContain(`<input type="hidden" name="booleans" value="[&quot;dry&quot;]">`);
    expect(t).not.toContain(" open>");
  });

  test("a refusal opens its workflow's form with what was sent and each input's message", () => {
    const t = dispatchBox(repo, [deploy, other], ["main"], "tok", {
      workflow: deploy.path,
      ref: "feature",
      values: { target: "<b>", dry: "false", level: "debug" },
      error: "the inputs are not valid",
      inputs: { target: "not allowed <here>" },
    }).value;
    expect(t.match(/<details class="dispatch" open>/g)?.length).toBe(1);
    expect(t).toContain(`<option value="feature" selected>feature</option>`);
    expect(t).toContain(`value="&lt;b&gt;" required aria-describedby="dispatch-0-0-hint dispatch-0-0-error" aria-invalid="true">`);
    expect(t).toContain(`<p class="error" id="dispatch-0-0-error">not allowed &lt;here&gt;</p>`);
    expect(t).toContain(`<input type="checkbox" name="input.dry" value="true">`);
    expect(t).toContain(`<option value="debug" selected>debug</option>`);
    expect(t).toContain(`<p class="error" role="alert">the inputs are not valid</p>`);
  });

  test("posted inputs: prefixed fields, booleans false when unticked, __proto__ a plain name, bad booleans ignored", () => {
    const f = new URLSearchParams([
      ["workflow", "x"],
      ["input.target", "prod"],
      ["input.__proto__", "p"],
      ["booleans", JSON.stringify(["dry", "verbose", 3])],
      ["input.verbose", "true"],
    ]);
    const got = postedInputs(f);
    expect(got).toEqual({ target: "prod", ["__proto__"]: "p", dry: "false", verbose: "true" } as Record<string, string>);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(postedInputs(new URLSearchParams([["booleans", "{bad"]]))).toEqual({});
  });
});
