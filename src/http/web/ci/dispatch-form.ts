// The "Run workflow" forms of the runs list: one disclosure per workflow of the default branch that
// has `on: workflow_dispatch`, with a branch to run it on and its inputs by type (string: a text
// field, boolean: a checkbox, choice: a select; required ones marked). A refused dispatch draws the
// list again with that workflow's form open, what was typed, and the service's message per input.
import type { DispatchableWorkflow } from "../../../services/ci/dispatch.ts";
import type { InputSpec } from "../../../services/ci/workflow-on.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { csrfInput } from "../kit/widgets.ts";

/** A refused dispatch, to draw its form again: the workflow, what was sent, and the messages. */
export interface DispatchRefusal {
  workflow: string;
  ref: string;
  /** The inputs as posted (a checkbox: "true" or "false"). */
  values: Record<string, string>;
  error: string;
  /** Per-input problems, by input name. */
  inputs: Record<string, string>;
}

/** The form field of input `name` (a prefix keeps inputs apart from the form's own fields). */
export const INPUT_PREFIX = "input.";

/** The form field naming the boolean inputs, so an unticked checkbox is sent as false rather than left out. */
export const BOOLEANS_FIELD = "booleans";

/** `POST /{org}/{repo}/runs/dispatch` */
export function dispatchHref(repo: RepoBody): string {
  return `/${seg(repo.org)}/${seg(repo.name)}/runs/dispatch`;
}

/** A per-input id, unique on the page (workflow index and input index: names may hold any character). */
function idOf(w: number, i: number): string {
  return `dispatch-${w}-${i}`;
}

function defaultText(d: InputSpec["default"]): string {
  return d === null ? "" : String(d);
}

function inputField(spec: InputSpec, id: string, value: string | undefined, problem: string | undefined): Html {
  const err = problem ? html`<p class="error" id="${id}-error">${problem}</p>` : "";
  const described = [spec.description ? `${id}-hint` : "", problem ? `${id}-error` : ""].filter(Boolean).join(" ");
  const aria = html`${described ? html` aria-describedby="${described}"` : ""}${problem ? html` aria-invalid="true"` : ""}`;
  const hint = spec.description ? html`<span class="muted hint" id="${id}-hint">${spec.description}</span>` : "";
  const mark = spec.required ? html` <span class="required">(required)</span>` : "";
  const field = `${INPUT_PREFIX}${spec.name}`;
  if (spec.type === "boolean") {
    const on = value === undefined ? spec.default === true : value === "true";
    return html`<div class="input"><label class="check"><input type="checkbox" name="${field}" value="true"${on ? html` checked` : ""}${aria}> ${spec.name}${mark}</label>${hint}${err}</div>`;
  }
  if (spec.type === "choice") {
    const chosen = value ?? defaultText(spec.default);
    return html`<div class="input"><label>${spec.name}${mark} <select name="${field}"${spec.required ? html` required` : ""}${aria}>${(spec.options ?? []).map(
      (o) => html`<option value="${o}"${o === chosen ? html` selected` : ""}>${o}</option>`,
    )}</select></label>${hint}${err}</div>`;
  }
  return html`<div class="input"><label>${spec.name}${mark} <input type="text" name="${field}" value="${value ?? defaultText(spec.default)}"${spec.required ? html` required` : ""}${aria}></label>${hint}${err}</div>`;
}

function workflowForm(repo: RepoBody, w: DispatchableWorkflow, index: number, branches: string[], csrf: string | null, refused: DispatchRefusal | null): Html {
  const mine = refused && refused.workflow === w.path ? refused : null;
  const ref = mine?.ref ?? repo.default_branch;
  const names = branches.includes(ref) ? branches : [ref, ...branches];
  const booleans = w.inputs.filter((i) => i.type === "boolean").map((i) => i.name);
  const file = w.file;
  return html`<details class="dispatch"${mine ? html` open` : ""}><summary>Run ${w.name ?? file}${w.name ? html` <span class="muted">${file}</span>` : ""}</summary>
<form class="row" method="post" action="${dispatchHref(repo)}">${csrfInput(csrf)}<input type="hidden" name="workflow" value="${w.path}">${
    booleans.length ? html`<input type="hidden" name="${BOOLEANS_FIELD}" value="${JSON.stringify(booleans)}">` : ""
  }
${mine ? html`<p class="error" role="alert">${mine.error}</p>` : ""}<label>Branch <select name="ref">${names.map((b) => html`<option value="${b}"${b === ref ? html` selected` : ""}>${b}</option>`)}</select></label>
${w.inputs.map((spec, i) => inputField(spec, idOf(index, i), mine?.values[spec.name], mine?.inputs[spec.name]))}
<div><button class="primary" type="submit">Run workflow</button></div></form></details>`;
}

/**
 * The "Run workflow" box: a form per dispatchable workflow (writers only; nothing when there is
 * none), and which workflow files could not be read this time (they may be dispatchable; the next
 * view tries again).
 */
export function dispatchBox(
  repo: RepoBody,
  workflows: DispatchableWorkflow[],
  branches: string[],
  csrf: string | null,
  refused: DispatchRefusal | null,
  unreadable: readonly string[] = [],
): Html {
  if (!workflows.length && !unreadable.length) return html``;
  return html`<section class="box" aria-labelledby="dispatch-h"><header><h2 id="dispatch-h" class="inh">Run workflow</h2><span class="muted">workflows of ${repo.default_branch} with <code>workflow_dispatch</code></span></header>
${workflows.map((w, i) => workflowForm(repo, w, i, branches, csrf, refused))}${
  unreadable.length
    ? html`<p class="muted notice">The workflows could not be read just now (${unreadable.map((p, i) => html`${i ? ", " : ""}<code>${p}</code>`)}); reload the page to try again.</p>`
    : ""
}</section>`;
}

/**
 * The inputs a dispatch form posted: every `input.NAME` field, and for each boolean the form named,
 * "true" when ticked and "false" otherwise (an unticked checkbox sends nothing). Bounded by the
 * form's own size limit; names and values are checked by the dispatch service.
 */
export function postedInputs(form: URLSearchParams): Record<string, string> {
  // A Map, not an object: an input named __proto__ must stay a name.
  const out = new Map<string, string>();
  for (const [k, v] of form) if (k.startsWith(INPUT_PREFIX)) out.set(k.slice(INPUT_PREFIX.length), v);
  let booleans: unknown = [];
  try {
    booleans = JSON.parse(form.get(BOOLEANS_FIELD) ?? "[]");
  } catch {
    booleans = [];
  }
  if (Array.isArray(booleans)) for (const b of booleans) if (typeof b === "string") out.set(b, out.get(b) === "true" ? "true" : "false");
  return Object.fromEntries(out);
}
