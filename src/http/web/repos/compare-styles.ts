// Styles of the compare pages: the two pickers on one row (stacked on a phone), the summary, the
// "Open a change" form. Long diff lines wrap: a page as wide as a phone never scrolls sideways,
// and no box scrolls without a keyboard stop (axe's scrollable-region-focusable).

export const COMPARE_CSS = `
.compare-page table.diff td.c{white-space:pre-wrap;overflow-wrap:anywhere}
form.compare-pick{display:flex;gap:.6rem;align-items:flex-end;flex-wrap:wrap;margin:0 0 1rem}
form.compare-pick label{flex:1;min-width:12rem;max-width:22rem}
form.compare-pick input{padding:.4rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);width:100%;font-family:ui-monospace,monospace}
.compare-arrow{padding:.45rem 0;color:var(--muted)}
.compare-summary{margin:0 0 1rem;overflow-wrap:anywhere}
.compare-open form{max-width:none}.compare-open input,.compare-open textarea{font-weight:400}.compare-open textarea{font-family:ui-monospace,monospace;font-size:.85rem}
@media (max-width:40rem){form.compare-pick{display:grid;align-items:stretch}form.compare-pick label{max-width:none}.compare-arrow{display:none}}
`;
