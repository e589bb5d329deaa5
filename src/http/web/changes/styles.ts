// Styles of the change pages: section tabs, state badges, the land form, the stack and queue.

export const CHANGES_CSS = `
nav.tabs{display:flex;gap:.2rem;flex-wrap:wrap;margin:0 0 1rem;border-bottom:1px solid var(--line)}
nav.tabs a{padding:.35rem .7rem;border:1px solid transparent;border-bottom:0;border-radius:6px 6px 0 0;margin-bottom:-1px}
nav.tabs a[aria-current]{border-color:var(--line);background:var(--bg);color:var(--fg);font-weight:600}
.badge.state-open{color:var(--add-fg);border-color:var(--add-fg)}.badge.state-landed{color:var(--link);border-color:var(--link)}
.badge.state-ejected{color:var(--bad);border-color:var(--bad)}.badge.state-queued{color:var(--hl-type);border-color:var(--hl-type)}
.change-title{font-size:1.3rem;word-break:break-word}
form.land{display:flex;gap:.8rem;align-items:center;flex-wrap:wrap;margin:0 0 1rem}
ol.queue{margin:.2rem 0 1rem}ol.queue a[aria-current],ol.stack-list li[aria-current]>a{font-weight:700}
ol.stack-list{padding-left:2.2rem}ol.stack-list>li{padding-left:0}
select,textarea{padding:.4rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);font:inherit}
textarea{width:100%;resize:vertical}
ul.list>li[aria-current]{background:var(--soft)}
`;
