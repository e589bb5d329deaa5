// Styles of the repository pages: highlighted code, line ranges, diffs, the filters and forms, and
// the repository layout with its icons.

/** The repository layout (repo-layout.ts) and the inline icons (kit/icons.ts). */
const LAYOUT_CSS = `
svg.icon{display:inline-block;vertical-align:-.15em;flex:none;overflow:visible}
.repo-head{display:flex;gap:.6rem 1rem;flex-wrap:wrap;align-items:center;justify-content:space-between;margin:.6rem 0 .4rem}
.repo-head h1{margin:0;font-size:1.35rem;font-weight:400;overflow-wrap:anywhere}.repo-head h1 a{text-decoration:none}.repo-head h1 a:hover,.repo-head h1 a:focus{text-decoration:underline}
.repo-actions{display:flex;gap:.4rem;flex-wrap:wrap}.repo-actions form{margin:0}
.repo-actions .button,.repo-actions button{display:inline-flex;gap:.35rem;align-items:center;padding:.25rem .7rem;font-size:.85rem;color:var(--fg)}
.repo-actions .button:hover{text-decoration:none}
.counter{display:inline-block;min-width:1.2rem;padding:0 .4rem;border-radius:1rem;background:var(--line);font-size:.75rem;font-weight:600;text-align:center}
.repo-about{margin:0 0 .6rem;display:flex;gap:.3rem 1rem;flex-wrap:wrap;overflow-wrap:anywhere}.repo-about .homepage{display:inline-flex;gap:.3rem;align-items:center}
.banner{margin:0 0 .8rem;padding:.5rem .8rem;border:1px solid var(--line);border-radius:6px;background:var(--soft)}
.banner p{margin:0}.banner a{text-decoration:underline}
div.mirror-banner{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}div.mirror-banner>p{flex:1 1 20rem}div.mirror-banner form{margin:0}
.sync-error{display:block;flex-basis:100%;overflow-wrap:anywhere}
nav.tabs.repo-tabs{display:flex;gap:.2rem;flex-wrap:wrap;margin:0 0 1rem;border-bottom:1px solid var(--line)}
nav.tabs.repo-tabs a{display:inline-flex;gap:.35rem;align-items:center;padding:.4rem .75rem;color:var(--fg);border:1px solid transparent;border-bottom:0;border-radius:6px 6px 0 0;margin-bottom:-1px}
nav.tabs.repo-tabs a[aria-current]{border-color:var(--line);background:var(--bg);font-weight:600}
.refbar{display:flex;gap:.5rem 1rem;flex-wrap:wrap;align-items:center;margin:0 0 .8rem}
.refbar>a,.refbar-end a{display:inline-flex;gap:.3rem;align-items:center}
.refbar-end{margin-left:auto;display:flex;gap:.5rem 1rem;flex-wrap:wrap;align-items:center}
.refbar a[aria-current]{font-weight:700}
.switcher summary{display:inline-flex;gap:.35rem;align-items:center;max-width:18rem}.switcher .ref-name{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
details.menu>ul li.sep{border-top:1px solid var(--line);margin-top:.3rem;padding-top:.3rem}
nav.issue-sections{display:flex;gap:.4rem;flex-wrap:wrap;margin:0 0 1rem}nav.issue-sections a{display:inline-flex;gap:.3rem;align-items:center;padding:.2rem .7rem;border:1px solid var(--line);border-radius:1rem;color:var(--fg)}nav.issue-sections a[aria-current]{background:var(--soft);font-weight:600}
h2.ci-title{margin:.2rem 0 .8rem}
.empty-repo h3{font-size:1rem;margin:1rem 0 .3rem}.empty-repo pre.push-cmds{background:var(--soft);border-radius:6px;overflow:auto;margin:.3rem 0 .6rem}
table.files td a{display:inline-flex;gap:.4rem;align-items:center}table.files svg.icon{color:var(--muted)}
@media (max-width:40rem){.refbar-end{margin-left:0}.repo-head h1{font-size:1.15rem}}
`;

/**
 * Highlighted code's classes and colours are kit/highlight-classes.ts's (one map with the engines).
 */
export const REPO_CSS = `
.crumbs a,main p a,.muted a,.warn a,[role=status] a{text-decoration:underline}
.sr{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
.path{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9rem;word-break:break-all}
.warn{padding:.5rem .8rem;border:1px solid var(--line);border-left:.25rem solid var(--bad);border-radius:6px}
.adds{color:var(--add-fg);font-weight:600}.dels{color:var(--bad);font-weight:600}
pre.msg{white-space:pre-wrap;word-break:break-word;margin:0}
a.checks-state.state-success>span,li.check.state-success>span:first-child{color:var(--add-fg)}a.checks-state.state-failure>span,li.check.state-failure>span:first-child{color:var(--bad)}li.check a{text-decoration:underline}
details.filelist{margin:0 0 1rem}details.filelist>summary{cursor:pointer;margin:0 0 .4rem}
details.filelist ul.list{border:1px solid var(--line);border-radius:6px;max-height:24rem;overflow:auto}
details.newrepo{margin:0 0 1rem}details.newrepo>summary{list-style:none}details.newrepo>summary::-webkit-details-marker{display:none}details.newrepo form{margin-top:.8rem}
fieldset{border:1px solid var(--line);border-radius:6px;padding:.4rem .8rem;display:grid;gap:.3rem}legend{font-weight:600;padding:0 .3rem}
label.radio{display:flex;gap:.4rem;align-items:baseline;font-weight:400}
form.filter{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap;margin:0 0 1rem}form.filter input{flex:1;min-width:10rem;max-width:28rem;padding:.4rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);font-family:ui-monospace,monospace}
table.code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem;line-height:1.45}table.code tr.sel{background:var(--mark)}
table.diff{border-collapse:collapse;width:100%;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem}
table.diff td{padding:0 .6rem;vertical-align:top}table.diff td.o,table.diff td.n{width:1%;text-align:right;color:var(--muted);user-select:none;white-space:nowrap}
table.diff td.c{white-space:pre;overflow-wrap:normal}
table.diff tr.add{background:var(--add-bg)}table.diff tr.del{background:var(--del-bg)}table.diff tr.hunk,table.diff tr.note{background:var(--hunk-bg);color:var(--muted)}
:root{--add-fg:#1a7f37;--add-bg:#dafbe1;--del-bg:#ffebe9;--hunk-bg:#ddf4ff}
@media (prefers-color-scheme:dark){:root{--add-fg:#3fb950;--add-bg:#12261e;--del-bg:#2d1619;--hunk-bg:#121d2f}}
/* The branches and tags pages (refs-pages.ts): rows that wrap on a phone, the default badge, ahead/behind, the row's actions. */
/* Links in the heading's text are told apart by more than colour (axe link-in-text-block). */
.refs-page h1 a{text-decoration:underline;text-underline-offset:.15em}
nav.ref-tabs{display:flex;gap:1rem;margin:0 0 .5rem}nav.ref-tabs a[aria-current=page]{font-weight:600;color:var(--fg);text-decoration:underline;text-underline-offset:.25em}
li.branch-row,li.tag-row{display:grid;gap:.2rem}
.branch-main{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}a.branch-name{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-weight:600;word-break:break-all}
.branch-commit a{color:inherit;text-decoration:underline}
.ahead-behind{font-size:.85rem;color:var(--muted)}.default-badge{color:var(--accent);border-color:var(--accent)}
.branch-actions{display:flex;gap:.8rem;align-items:center;flex-wrap:wrap}.branch-actions a{text-decoration:underline}
.downloads{display:inline-flex;gap:.6rem}
${LAYOUT_CSS}`;
