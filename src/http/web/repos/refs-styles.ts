// Styles of the branches and tags pages: rows that wrap on a phone, the default badge, the
// ahead/behind counts and the row's actions.

export const REFS_CSS = `
/* Links in the heading's text are told apart by more than colour (axe link-in-text-block). */
.refs-page h1 a{text-decoration:underline;text-underline-offset:.15em}
nav.ref-tabs{display:flex;gap:1rem;margin:0 0 .5rem}nav.ref-tabs a[aria-current=page]{font-weight:600;color:var(--fg);text-decoration:underline;text-underline-offset:.25em}
li.branch-row,li.tag-row{display:grid;gap:.2rem}
.branch-main{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}a.branch-name{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-weight:600;word-break:break-all}
.branch-commit a{color:inherit;text-decoration:underline}
.ahead-behind{font-size:.85rem;color:var(--muted)}.default-badge{color:var(--accent);border-color:var(--accent)}
.branch-actions{display:flex;gap:.8rem;align-items:center;flex-wrap:wrap}.branch-actions a{text-decoration:underline}
.downloads{display:inline-flex;gap:.6rem}
button.danger{color:var(--bad)}
`;
