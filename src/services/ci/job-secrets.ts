// What a job receives of its repository's secrets and variables (plan-29 Part A "Resolution",
// §2.3): a repo value shadows an org value of the same NAME; an org value reaches the repo when
// its visibility is `all` or it lists the repo. Secrets: only the names the job references
// (JobSpec v2 `secretRefs`), and none at all for an untrusted run (a change from a fork).
// Variables: every one that reaches the repo, and none for an untrusted run either (they are
// readable by writers only, DECISIONS §5, and a fork's author need not be one).
// Pure reads: the job description (part D) calls these; unsealing happens here and nowhere else.
import type { Queryable } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import { secretScope, unseal } from "./seal.ts";
import { secretsKey } from "./secrets-key.ts";
import * as store from "./store-secrets.ts";
import type { NamedRow } from "./store-secrets.ts";

/** The secrets of a job, or why the job cannot run (the job fails with `error`; it never holds a value). */
export type JobSecrets = { ok: true; secrets: Record<string, string> } | { ok: false; error: string };

/** The rows reaching `repoId` by NAME, the repo's own winning. */
async function reaching(q: Queryable, kind: store.CiValueKind, orgId: string, repoId: string): Promise<Map<string, NamedRow>> {
  const out = new Map<string, NamedRow>();
  for (const r of await store.orgRowsReaching(q, kind, orgId, repoId)) out.set(r.name, r);
  for (const r of await store.rowsOfScope(q, kind, orgId, repoId)) out.set(r.name, r);
  return out;
}

/**
 * The values of the secrets `refs` names for a job of `repoId`. A referenced NAME that is not set
 * is absent (the expression reads it as an empty string, as GitHub's does).
 */
export async function secretsForJob(
  ctx: Ctx,
  q: Queryable,
  job: { orgId: string; repoId: string; trusted: boolean; refs: readonly string[] },
): Promise<JobSecrets> {
  // Why: a change from a fork runs code its author wrote; handing it secrets would hand them over.
  if (!job.trusted || !job.refs.length) return { ok: true, secrets: {} };
  const rows = await reaching(q, "secret", job.orgId, job.repoId);
  const wanted = [...new Set(job.refs)].map((n) => rows.get(n)).filter((r): r is NamedRow => !!r);
  if (!wanted.length) return { ok: true, secrets: {} };
  const key = secretsKey(ctx, { create: false });
  if (!key) return { ok: false, error: `secret ${wanted[0]!.name} cannot be opened: this installation has no secrets key (SVC_SECRETS_KEY)` };
  const sealed = new Map(
    (
      await store.sealedSecrets(
        q,
        wanted.map((r) => r.id),
      )
    ).map((s) => [s.id, s]),
  );
  const secrets: Record<string, string> = {};
  for (const r of wanted) {
    const s = sealed.get(r.id);
    if (!s) continue; // deleted meanwhile
    const opened = unseal(key, secretScope(s.orgId, s.repoId, s.name), s.sealed);
    if (opened.ok) secrets[r.name] = opened.value;
    else if (opened.kind === "other_key")
      return {
        ok: false,
        error: `secret ${r.name} was encrypted with another key (id ${opened.keyId}); set SVC_SECRETS_KEY to that key or set the secret again`,
      };
    else return { ok: false, error: `secret ${r.name} is damaged; set it again` };
  }
  return { ok: true, secrets };
}

/** Every variable reaching a job of `repoId` (the `vars` context), repo values shadowing org ones; none for an untrusted run. */
export async function variablesForJob(q: Queryable, job: { orgId: string; repoId: string; trusted: boolean }): Promise<Record<string, string>> {
  // Why none for a change from a fork: variables are readable by writers only (DECISIONS §5) and
  // the fork's author, who writes the workflow, need not be one (GitHub gives a fork's pull request none either).
  if (!job.trusted) return {};
  const out: Record<string, string> = {};
  for (const [name, r] of await reaching(q, "variable", job.orgId, job.repoId)) out[name] = r.value ?? "";
  return out;
}
