// The labels page of a repository: every label with its colour, description and a link to its open
// issues; writers create labels and edit or delete each one (forms in <details>, no script).
import type { Label } from "../../../services/issues/schemas.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { alertOf, csrfField } from "../kit/sign-in.ts";
import { repoHref } from "../repos/tree-page.ts";
import { issuesHeader, labelChip } from "./list-page.ts";
import type { Frame } from "../kit/layout.ts";
import type { RepoChrome } from "../../../services/web/views.ts";

/** What a refused label form had (shown again with the reason). */
export interface LabelValues {
  name?: string;
  color?: string;
  description?: string;
}

/** A label's three fields; `id` keeps the labels of several forms on one page unique. */
function labelFields(id: string, v: LabelValues): Html {
  return html`<label for="${id}-name">Name</label><input id="${id}-name" type="text" name="name" required maxlength="50" value="${v.name ?? ""}">
<label for="${id}-color">Colour</label><input id="${id}-color" type="text" name="color" required maxlength="7" pattern="#?[0-9a-fA-F]{6}" placeholder="#d73a4a" value="${v.color ?? ""}">
<label for="${id}-desc">Description <span class="muted">(optional)</span></label><input id="${id}-desc" type="text" name="description" maxlength="200" value="${v.description ?? ""}">`;
}

/** The labels page; `refused` re-opens the form that was refused (the new-label form, or a label's edit form) with its values. */
export function labelsPage(
  frame: Frame,
  chrome: RepoChrome,
  labels: Label[],
  canEdit: boolean,
  refused?: { label: string | null; values: LabelValues; error: string },
): Html {
  const csrf = frame.csrf;
  const base = repoHref(chrome.repo);
  const newValues = refused && refused.label === null ? refused.values : {};
  const create = canEdit
    ? html`<details class="newrepo"${refused && refused.label === null ? html` open` : ""}><summary class="button">New label</summary>${refused && refused.label === null ? alertOf(refused.error) : ""}<form class="label-form" method="post" action="${base}/labels">${csrfField(csrf)}${labelFields("new-label", { color: "#ededed", ...newValues })}<div><button class="primary" type="submit">Create label</button></div></form></details>`
    : "";
  const row = (l: Label, i: number) => {
    const mine = refused && refused.label !== null && refused.label.toLowerCase() === l.name.toLowerCase();
    const values = mine ? refused.values : { name: l.name, color: `#${l.color}`, description: l.description ?? "" };
    const action = `${base}/labels/${seg(l.name)}`;
    const edit = canEdit
      ? html`<div class="label-actions"><details class="edit-label"${mine ? html` open` : ""}><summary class="button">Edit</summary>${mine ? alertOf(refused.error) : ""}<form class="label-form" method="post" action="${action}/edit">${csrfField(csrf)}${labelFields(`label-${i}`, values)}<div><button class="primary" type="submit">Save</button></div></form></details>
<form class="inline" method="post" action="${action}/delete">${csrfField(csrf)}<button type="submit" class="danger" aria-label="Delete label ${l.name}">Delete</button></form></div>`
      : "";
    return html`<li class="label-row"><div>${labelChip(l, base)}${l.description ? html` <span class="muted">${l.description}</span>` : ""}</div>${edit}</li>`;
  };
  return html`${issuesHeader(frame, chrome, "labels")}
${refused && refused.label !== null && !labels.some((l) => l.name.toLowerCase() === refused.label!.toLowerCase()) ? alertOf(refused.error) : ""}
${create}
<section class="box" aria-label="Labels"><header><strong>${labels.length} ${labels.length === 1 ? "label" : "labels"}</strong></header>${
    labels.length
      ? html`<ul class="list">${labels.map(row)}</ul>`
      : html`<p class="pad muted">No labels yet.${canEdit ? " Create one to sort issues." : ""}</p>`
  }</section>`;
}
