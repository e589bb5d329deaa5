// Styles of the header search box, the search page and the explore page (issue 33).
export const DISCOVERY_CSS = `
form.top-search{flex:1 1 12rem;max-width:22rem;margin:0}
form.top-search input{width:100%;padding:.3rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg)}
form.search-page{display:flex;gap:.6rem;align-items:flex-end;flex-wrap:wrap;margin:0 0 1rem}
form.search-page label{flex:1 1 14rem}form.search-page label.scope{flex:0 1 14rem}
form.search-page input[type=search]{padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);width:100%}
.hits>li .hit-meta{font-size:.85rem}.hits>li strong{word-break:break-word}.hits .desc{overflow-wrap:anywhere}
p.result-count{margin:0 0 .6rem}
@media (max-width:40rem){form.top-search{max-width:none;order:3;flex-basis:100%}}
`;
