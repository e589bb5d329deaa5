// Styles of the change pages: section tabs, state badges, the land form, the stack and queue, the
// review page's two columns, timeline, line links and inline comment forms.

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

.change-head{display:flex;gap:.8rem;align-items:flex-start;flex-wrap:wrap}.change-head h2{margin:.5rem 0;flex:1}
details.edit-title{margin:.5rem 0}details.edit-title>summary{list-style:none}details.edit-title>summary::-webkit-details-marker{display:none}
form.title-form{display:flex;gap:.5rem;margin-top:.5rem;min-width:20rem}
.review{display:grid;grid-template-columns:minmax(0,1fr) 18rem;gap:1.2rem;align-items:start}
.review-side .box .pad p{margin:0 0 .5rem}
ol.timeline{list-style:none;margin:0 0 1rem;padding:0 0 0 1rem;border-left:2px solid var(--line)}
ol.timeline a{text-decoration:underline}ol.timeline>li{margin:0 0 .8rem}ol.timeline>li.event{color:var(--muted)}ol.timeline>li.event strong{color:var(--fg)}
.change-actions{display:flex;gap:.6rem;flex-wrap:wrap;margin:0 0 1rem}
table.diff td.o a,table.diff td.n a{color:var(--muted);display:block}
table.diff tr.comment-row>td{padding:.5rem .8rem;background:var(--bg);font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:.9rem;white-space:normal}
form.stack-wide{display:grid;gap:.6rem;max-width:48rem}
ol.timeline>li.review>.box{margin:0}ol.timeline>li.review>.box>header{justify-content:space-between}
ol.timeline>li.verdict-approve>.box{border-color:var(--add-fg)}ol.timeline>li.verdict-request_changes>.box{border-color:var(--bad)}
form.ask{display:flex;gap:.4rem}form.ask input{flex:1;min-width:0}
ul.needs{list-style:none;padding:0;margin:.5em 0}ul.needs li{margin:.2em 0}li.need-met>span:first-child{color:var(--add-fg)}li.need-missing>span:first-child{color:var(--bad)}li.check a{text-decoration:underline}li.check.state-success>span:first-child{color:var(--add-fg)}li.check.state-failure>span:first-child{color:var(--bad)}
.thread{border:1px solid var(--line);border-radius:6px;margin:.4rem 0;background:var(--bg)}.thread.outdated{border-style:dashed}
.thread>summary{padding:.4rem .8rem;cursor:pointer}.thread-head{padding:.4rem .8rem;background:var(--soft);border-bottom:1px solid var(--line)}
.thread-head a.path,.thread a{text-decoration:underline}.badge.outdated{color:var(--hl-type);border-color:var(--hl-type)}
pre.thread-code{margin:0;padding:.4rem .8rem;overflow:auto;border-bottom:1px solid var(--line);white-space:pre}pre.thread-code mark{background:var(--mark);color:inherit;display:block}
article.comment{border-top:1px solid var(--line)}article.comment:first-of-type{border-top:0}article.comment>header{padding:.4rem .8rem;display:flex;gap:.6rem;align-items:baseline;flex-wrap:wrap}
article.comment>header form{margin-left:auto}.thread-forms{display:flex;gap:.6rem;align-items:flex-start;flex-wrap:wrap;padding:.4rem .8rem;border-top:1px solid var(--line)}
details.reply>summary,details.edit-comment>summary{list-style:none;cursor:pointer}details.edit-comment>summary{padding:0 .8rem .4rem;color:var(--link)}
details.reply>summary::-webkit-details-marker,details.edit-comment>summary::-webkit-details-marker{display:none}details.reply[open]{flex-basis:100%}
.suggestion-box{margin:0 .8rem .6rem;border:1px solid var(--line);border-radius:6px;overflow:hidden}.suggestion-actions{display:flex;gap:1rem;align-items:center;flex-wrap:wrap}
table.diff tr.thread-row>td{padding:.3rem .8rem;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:.9rem;white-space:normal;background:var(--soft)}
table.diff tr.sel td.o,table.diff tr.sel td.n{background:var(--mark)}
details.elsewhere{padding:.4rem .8rem;border-top:1px solid var(--line)}details.elsewhere>summary{cursor:pointer}
form.general-comment{margin:0 0 1rem}form.batch{margin:0 0 1rem}
li.thread-item>.thread{margin:0}
details.review-drop{margin:0 0 1rem}details.review-drop>summary{list-style:none;margin:0 0 .5rem}details.review-drop>summary::-webkit-details-marker{display:none}
@media (max-width:52rem){.review{grid-template-columns:minmax(0,1fr)}}
.badge.pending{color:var(--hl-type);border-color:var(--hl-type)}details.review-drop>summary .badge{margin-left:.5rem}p.pending-note{margin:0}[data-pending-note][hidden]{display:none}
`;
