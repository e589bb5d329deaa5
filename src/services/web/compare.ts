// What the compare pages show (issue 33): the refs to pick from, and a comparison read through the
// compare service the API answers with (so a page never compares what the API would refuse), with
// what the "Open a change" form is prefilled with.
import { AppError } from "../../errors.ts";
import type { RepoTarget } from "../access/target.ts";
import { listChanges } from "../changes/changes.ts";
import { compare } from "../changes/diff.ts";
import type { Change, Comparison } from "../changes/schemas.ts";
import type { Ctx } from "../context.ts";
import { refsOf } from "../git/snapshot.ts";
import { repoChrome, type RefChoice, type RepoChrome } from "./views.ts";

/** The compare form's page: the repository and the refs to pick from. */
export interface ComparePicker {
  chrome: RepoChrome;
  /** Branches first, then tags, each by name (the page offers the first ones; any name typed in compares). */
  choices: RefChoice[];
}

/** The prefilled "Open a change" form: head and base are branches of this repository. */
export interface ChangeDraft {
  branch: string;
  target: string;
  title: string;
  description: string;
}

/** A compare page: the picker, and the comparison or why there is none (an unknown ref: 404, a bad spec: 400). */
export interface CompareView extends ComparePicker {
  base: string;
  head: string;
  comparison: Comparison | null;
  refusal: AppError | null;
  /** The form's values when a change could be opened from this comparison (the head's branch has commits the base's lacks). */
  draft: ChangeDraft | null;
  /** Open changes from the head's branch onto the base's (among the newest OPEN_CHANGES_LOOKED_AT open ones). */
  open: Change[];
}

/** Open changes looked through for one from the same branch onto the same target (one page of the list). */
const OPEN_CHANGES_LOOKED_AT = 100;

/** Title length the changes service takes (longer subjects are cut). */
const MAX_TITLE = 200;
/** Commit subjects the prefilled description lists at most. */
const DRAFT_SUBJECTS = 100;

/** The branches and tags the pickers offer. */
async function choicesOf(ctx: Ctx, t: RepoTarget): Promise<RefChoice[]> {
  const branches: RefChoice[] = [];
  const tags: RefChoice[] = [];
  for (const r of await refsOf(ctx, t)) {
    if (r.name.startsWith("refs/heads/")) branches.push({ kind: "branch", name: r.name.slice(11) });
    else if (r.name.startsWith("refs/tags/")) tags.push({ kind: "tag", name: r.name.slice(10) });
  }
  const byName = (a: RefChoice, b: RefChoice) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return [...branches.sort(byName), ...tags.sort(byName)];
}

/** The compare form: the repository (404 when the viewer may not see it, through repoChrome's reads) and its refs. */
export async function comparePickerView(ctx: Ctx, t: RepoTarget): Promise<ComparePicker> {
  const [chrome, choices] = await Promise.all([repoChrome(ctx, t), choicesOf(ctx, t)]);
  return { chrome, choices };
}

/** A branch name as a title: `fix-upload_retries` → "Fix upload retries". */
function titleOfBranch(branch: string): string {
  const words = (branch.split("/").pop() ?? branch).replace(/[-_]+/g, " ").trim() || branch;
  return (words[0]!.toUpperCase() + words.slice(1)).slice(0, MAX_TITLE);
}

/** The form's prefill: one commit gives its subject and body; several, the branch's name and a list of their subjects. */
export function draftOf(c: Comparison, branch: string, target: string): ChangeDraft {
  if (c.commits.length === 1) {
    const [subject = "", ...rest] = c.commits[0]!.message.split("\n");
    return { branch, target, title: subject.trim().slice(0, MAX_TITLE) || titleOfBranch(branch), description: rest.join("\n").trim() };
  }
  const subjects = c.commits.slice(-DRAFT_SUBJECTS).map((x) => `- ${x.message.split("\n")[0]!.trim()}`);
  const more = c.ahead > subjects.length ? `\n- … and ${c.ahead - subjects.length} earlier commits` : "";
  return { branch, target, title: titleOfBranch(branch), description: subjects.join("\n") + more };
}

/**
 * The compare page of `base...head`. An unknown or malformed revision is not thrown: the page
 * shows the pickers with the reason, at the API's status. The repository itself was already
 * proven readable by the caller's RepoTarget (a private one is the same 404 as a missing one).
 */
export async function compareView(ctx: Ctx, t: RepoTarget, base: string, head: string): Promise<CompareView> {
  const [picker, outcome] = await Promise.all([
    comparePickerView(ctx, t),
    compare(ctx, t, `${base}...${head}`).then(
      (comparison) => ({ comparison, refusal: null }),
      (e: unknown) => {
        // Only the revision's refusals are the page's to show; anything else is the error page's.
        if (e instanceof AppError && (e.code === "not_found" || e.code === "invalid")) return { comparison: null, refusal: e };
        throw e;
      },
    ),
  ]);
  const { comparison, refusal } = outcome;
  const isBranch = (name: string) => picker.choices.some((c) => c.kind === "branch" && c.name === name);
  const draft =
    comparison && comparison.ahead > 0 && picker.chrome.repo.kind !== "mirror" && isBranch(base) && isBranch(head) && base !== head
      ? draftOf(comparison, head, base)
      : null;
  // Read through the changes list the API answers (repo:read), like GitHub's "View pull request".
  const open = draft
    ? (await listChanges(ctx, t, { state: "open", limit: String(OPEN_CHANGES_LOOKED_AT) })).changes.filter(
        (c) => !c.source && c.branch === head && c.target === base,
      )
    : [];
  return { ...picker, base, head, comparison, refusal, draft, open };
}
