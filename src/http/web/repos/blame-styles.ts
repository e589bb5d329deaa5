// Styles of the blame page: the commit column beside the lines, one band per range.

/** Registered in kit/assets.ts. */
export const BLAME_CSS = `
table.blame td.who{width:1%;min-width:10rem;max-width:18rem;padding:.15rem .6rem;border-right:1px solid var(--line);font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:.8rem;line-height:1.3}
table.blame td.who a.sum{display:block;max-width:17rem;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:var(--fg)}
table.blame td.who .by{display:block;color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:17rem}
table.blame tr.first td{border-top:1px solid var(--line)}table.blame tr.alt td.who{background:var(--soft)}
@media (max-width:40rem){table.blame td.who{min-width:7rem;max-width:8rem}table.blame td.who a.sum,table.blame td.who .by{max-width:7.5rem}}
`;
