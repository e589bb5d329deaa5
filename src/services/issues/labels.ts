// A repository's labels (DECISIONS §5 "Issues"): name (unique case-insensitively, no comma: the
// list filter separates names with commas), color `#rrggbb` or `rrggbb`, description. Readers
// list them; writers create, edit and delete them.
import { Conflict, NotFound, Unprocessable } from "../../errors.ts";
import { newId } from "../../util/ids.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import { labelBody } from "./issues.ts";
import { type Label, type LabelCreate, type LabelList, type LabelPatch, MAX_LABEL_DESCRIPTION, MAX_LABEL_NAME, MAX_LABELS } from "./schemas.ts";
import * as store from "./store.ts";
import type { LabelRow } from "./store.ts";

function checkName(name: unknown): string {
  const n = typeof name === "string" ? name.trim() : "";
  if (!n || n.length > MAX_LABEL_NAME || /[,\p{Cc}]/u.test(n))
    throw Unprocessable(`a label name is 1-${MAX_LABEL_NAME} characters without commas or control characters`);
  return n;
}

function checkColor(color: unknown): string {
  const m = typeof color === "string" ? /^#?([0-9a-fA-F]{6})$/.exec(color.trim()) : null;
  if (!m) throw Unprocessable("color must be six hex digits, like #d73a4a or d73a4a");
  return m[1]!.toLowerCase();
}

function checkDescription(d: unknown): string | null {
  if (d === undefined || d === null) return null;
  if (typeof d !== "string" || d.length > MAX_LABEL_DESCRIPTION || /\p{Cc}/u.test(d))
    throw Unprocessable(`description must be at most ${MAX_LABEL_DESCRIPTION} characters on one line`);
  return d.trim() === "" ? null : d.trim();
}

async function mustLabel(ctx: Ctx, repoId: string, name: string): Promise<LabelRow> {
  const [row] = name.length <= 200 ? await store.labelsByKeys(ctx.db.read, repoId, [name.trim().toLowerCase()]) : [];
  if (!row) throw NotFound("label not found");
  return row;
}

/** GET …/labels. */
export async function listLabels(ctx: Ctx, t: RepoTarget): Promise<LabelList> {
  need(t, "repo:read");
  return { labels: (await store.labelsOf(ctx.db.read, t.repo.id)).map(labelBody) };
}

/** POST …/labels: writers; 409 when the name is taken (case-insensitively). */
export async function createLabel(ctx: Ctx, t: RepoTarget, input: LabelCreate): Promise<Label> {
  need(t, { kind: "issue:triage" });
  const name = checkName(input.name);
  const row: LabelRow = {
    id: newId(),
    repoId: t.repo.id,
    name,
    nameKey: name.toLowerCase(),
    color: checkColor(input.color),
    description: checkDescription(input.description),
    createdAt: now(),
  };
  await ctx.db.transaction(async (tx) => {
    if ((await store.labelCount(tx, t.repo.id)) >= MAX_LABELS) throw Unprocessable(`a repository has at most ${MAX_LABELS} labels`);
    if ((await store.labelsByKeys(tx, t.repo.id, [row.nameKey])).length) throw Conflict(`a label named ${JSON.stringify(name)} exists`);
    await store.insertLabel(tx, row);
  });
  return labelBody(row);
}

/** PATCH …/labels/{name}: writers. */
export async function patchLabel(ctx: Ctx, t: RepoTarget, name: string, input: LabelPatch): Promise<Label> {
  need(t, { kind: "issue:triage" });
  const row = await mustLabel(ctx, t.repo.id, name);
  const set: Partial<LabelRow> = {};
  if (input.name !== undefined) {
    set.name = checkName(input.name);
    set.nameKey = set.name.toLowerCase();
  }
  if (input.color !== undefined) set.color = checkColor(input.color);
  if (input.description !== undefined) set.description = checkDescription(input.description);
  await ctx.db.transaction(async (tx) => {
    if (set.nameKey && set.nameKey !== row.nameKey && (await store.labelsByKeys(tx, t.repo.id, [set.nameKey])).length)
      throw Conflict(`a label named ${JSON.stringify(set.name)} exists`);
    if (Object.keys(set).length) await store.updateLabel(tx, row.id, set);
  });
  return labelBody({ ...row, ...set });
}

/** DELETE …/labels/{name}: writers; issues lose the label. */
export async function deleteLabel(ctx: Ctx, t: RepoTarget, name: string): Promise<void> {
  need(t, { kind: "issue:triage" });
  const row = await mustLabel(ctx, t.repo.id, name);
  await ctx.db.transaction(async (tx) => store.deleteLabel(tx, row.id));
}
