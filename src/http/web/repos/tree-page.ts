// What the code pages share (their top, the clone box, crumbs), the tree page (with README) and the empty repository's page.
import type { RepoBody } from "../../../services/repos/repos.ts";
import type { Tree } from "../../../services/repos/schemas.ts";
import { PAGE_ENTRIES, type RepoFrame } from "../../../services/web/views.ts";
import { html, seg, segs, trusted, type Html } from "../kit/html.ts";
import { icon } from "../kit/icons.ts";
import type { Frame } from "../kit/layout.ts";
import { refSwitcher, repoTop, type SwitchView } from "./repo-layout.ts";
import { MARKDOWN_LIMIT, renderMarkdownOutcome, type LinkBase } from "../kit/markdown.ts";
import type { Ctx } from "../../../services/context.ts";

/** `/org/repo` */
export function repoHref(repo: RepoBody): string {
  return `/${seg(repo.org)}/${seg(repo.name)}`;
}

/** A byte count for people. */
export function sizeText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The clone box of the code pages: the HTTPS and SSH addresses, each with a Copy button (script only). */
export function cloneBox(r: RepoBody): Html {
  return html`<div class="box clone-box"><div class="clone pad">
<label for="clone-https" class="inl">HTTPS</label><input id="clone-https" type="text" readonly value="${r.clone_url}"><button type="button" data-copy="clone-https" hidden>Copy</button>
${r.ssh_clone_url ? html`<label for="clone-ssh" class="inl">SSH</label><input id="clone-ssh" type="text" readonly value="${r.ssh_clone_url}"><button type="button" data-copy="clone-ssh" hidden>Copy</button>` : ""}
</div></div>`;
}

/** The top of a code page (tree, file, history): the repository layout on its Code tab with the branch switcher, the clone box, and the frame's notice. */
export function codeTop(frame: Frame, f: RepoFrame, view: SwitchView, clone = true): Html {
  return html`${repoTop(frame, f, "code", { switcher: f.choices.length ? refSwitcher(f, view) : undefined })}${clone ? cloneBox(f.repo) : ""}${f.notice ? html`<p class="notice" role="status">${f.notice}</p>` : ""}`;
}

/** Breadcrumbs for a path inside the repository. */
export function crumbs(f: RepoFrame): Html {
  if (!f.path) return html``;
  const base = `${repoHref(f.repo)}/tree/${segs(f.ref.short)}`;
  const parts = f.path.split("/");
  return html`<nav class="crumbs" aria-label="Path"><a href="${base}">${f.repo.name}</a>${parts.map((p, i) =>
    i === parts.length - 1 ? html` / <strong>${p}</strong>` : html` / <a href="${base}/${segs(parts.slice(0, i + 1).join("/"))}">${p}</a>`,
  )}</nav>`;
}

/** Where a README's relative links resolve. */
export function readmeBase(f: RepoFrame, path: string): LinkBase {
  return { repo: repoHref(f.repo), ref: segs(f.ref.short), dir: path.split("/").slice(0, -1).join("/") };
}

/**
 * A README as the tree page shows it: rendered Markdown (big ones, and any with fenced code, on a
 * worker thread) or its text. A full rendering is remembered by blob id and link base
 * (`ctx.caches.readmes`): a blob never changes, so every view after the first is a lookup, not a
 * trip to the thread.
 */
export async function readmeMarkup(ctx: Pick<Ctx, "threads" | "caches">, f: RepoFrame, readme: { path: string; text: string; oid: string }): Promise<Html> {
  if (!/\.(md|markdown)$/i.test(readme.path) || readme.text.length > MARKDOWN_LIMIT) return html`<pre>${readme.text}</pre>`;
  const base = readmeBase(f, readme.path);
  const key = `${readme.oid}\u0000${base.repo}\u0000${base.ref}\u0000${base.dir}`;
  const hit = ctx.caches.readmes.get(key);
  if (hit !== undefined) return trusted(hit);
  const out = await renderMarkdownOutcome(ctx.threads, readme.text, base);
  if (out.final) ctx.caches.readmes.set(key, out.html.value);
  return out.html;
}

/** A directory listing with its README (`readme.html`: its markup, from readmeMarkup). */
export function treePage(
  frame: Frame,
  f: RepoFrame,
  tree: (Tree & { total: number; offset: number }) | null,
  readme: { path: string; html: Html } | null,
): Html {
  const base = repoHref(f.repo);
  const ref = segs(f.ref.short);
  if (!tree) return html`${codeTop(frame, f, "tree", false)}${emptyRepo(frame, f.repo)}`;
  const rows = tree.entries.map((e) => {
    const href = e.type === "tree" ? `${base}/tree/${ref}/${segs(e.path)}` : e.type === "blob" ? `${base}/blob/${ref}/${segs(e.path)}` : null;
    const label =
      e.type === "tree"
        ? html`${icon("folder")} ${e.name}/`
        : e.type === "commit"
          ? html`${icon("submodule")} ${e.name} <span class="muted">(submodule)</span>`
          : e.mode === "120000"
            ? html`${icon("symlink")} ${e.name} <span class="muted">(symlink)</span>`
            : html`${icon("file")} ${e.name}`;
    return html`<tr><td>${href ? html`<a href="${href}">${label}</a>` : label}</td><td class="size">${e.size === null ? "" : sizeText(e.size)}</td></tr>`;
  });
  const here = `${base}/tree/${ref}${f.path ? `/${segs(f.path)}` : ""}`;
  const end = tree.offset + tree.entries.length;
  const pager =
    tree.total > tree.entries.length
      ? html`<nav class="pager" aria-label="Entries"><span class="muted">Entries ${(tree.offset + 1).toLocaleString("en")}–${end.toLocaleString("en")} of ${tree.total.toLocaleString("en")}</span>${tree.offset > 0 ? html`<a href="${here}?offset=${Math.max(0, tree.offset - PAGE_ENTRIES)}">Previous entries</a>` : ""}${end < tree.total ? html`<a href="${here}?offset=${end}">Next entries</a>` : ""}</nav>`
      : "";
  return html`${codeTop(frame, f, "tree")}${crumbs(f)}
<section class="box" aria-label="Files"><div class="scroll"><table class="files"><tbody>${rows}</tbody></table></div></section>${pager}
${
  readme
    ? html`<section class="box" aria-labelledby="readme-h"><header><h2 id="readme-h" class="inh">${readme.path.split("/").pop()}</h2></header>
<div class="markdown">${readme.html}</div></section>`
    : ""
}`;
}

/**
 * The empty repository's page: how to push the first commit over HTTPS (git asks for a username
 * and a token as the password) or SSH, with links to where tokens and keys are made.
 */
export function emptyRepo(frame: Frame, r: RepoBody): Html {
  // A fork being made has no refs yet: the banner above says so, and nothing is to be pushed.
  if (r.fork_state === "pending" || r.fork_state === "failed")
    return html`<section class="box empty-repo" aria-labelledby="empty-h"><header><h2 id="empty-h" class="inh">${r.fork_state === "pending" ? "This fork is being made" : "This fork could not be made"}</h2></header>
<p class="pad">${r.fork_state === "pending" ? "Its branches and tags appear here in a moment: reload the page." : "Delete it in Settings and fork again."}</p></section>`;
  if (r.kind === "mirror")
    return html`<section class="box empty-repo" aria-labelledby="empty-h"><header><h2 id="empty-h" class="inh">This mirror is empty</h2></header>
<p class="pad">${r.last_sync_at === null ? "Its first sync from the origin has not finished yet." : r.sync_error ? "No sync from its origin has succeeded yet (see the error above)." : "Its origin has no branches or tags."} A mirror takes no pushes: its branches and tags come from the origin.</p></section>`;
  const branch = r.default_branch;
  const who = frame.viewer ? frame.viewer.handle : "your-handle";
  const push = (url: string) => html`<pre class="pad push-cmds" tabindex="0">git init
git add .
git commit -m "First commit"
git branch -M ${branch}
git remote add origin ${url}
git push -u origin ${branch}</pre>`;
  const existing = (url: string) => html`<pre class="pad push-cmds" tabindex="0">git remote add origin ${url}
git push -u origin ${branch}</pre>`;
  return html`<section class="box empty-repo" aria-labelledby="empty-h"><header><h2 id="empty-h" class="inh">This repository is empty</h2></header>
<div class="pad">${
    r.viewer_write
      ? html`<p>Push a first commit to <strong>${branch}</strong> from your computer.</p>`
      : html`<p>Nothing has been pushed yet. Someone with write access can push the first commit to <strong>${branch}</strong>.</p>`
  }
<h3>Over HTTPS</h3>
<p>Git asks for a <strong>username</strong> and a <strong>password</strong>. Use a <strong>token as the password</strong>, not your account password (git refuses it); any username will do (your handle, <code>${who}</code>, is fine). <a href="/settings/tokens">Make a token in Settings → Tokens</a> (with write access to this repository), then paste it when git asks for the password. A credential helper (<code>git config --global credential.helper store</code> or your system's keychain) remembers it.</p>
<p class="muted">A new project:</p>${push(r.clone_url)}
<p class="muted">An existing repository:</p>${existing(r.clone_url)}
${
  r.ssh_clone_url
    ? html`<h3>Over SSH</h3><p>Add your public key in <a href="/settings/keys">Settings → SSH keys</a> first; no password is asked.</p>${existing(r.ssh_clone_url)}`
    : ""
}</div></section>`;
}
