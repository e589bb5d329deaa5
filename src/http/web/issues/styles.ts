// Styles of the issue pages: the filter bar, state and label chips, the timeline's comments and
// events, the side column's pickers, and the labels page.

export const ISSUES_CSS = `
.tab-count{display:inline-block;min-width:1.4rem;padding:0 .4rem;margin-left:.2rem;border-radius:1rem;background:var(--soft);border:1px solid var(--line);font-size:.75rem;text-align:center;color:var(--fg);font-weight:400}
.issues-bar{display:flex;justify-content:flex-end;margin:0 0 .6rem}.issues-bar:empty{display:none}
h1.repo-title a{text-decoration:underline;text-underline-offset:.15em}a.who,article.comment>header a,li.issue-row .muted a{text-decoration:underline}
form.issue-filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.6rem;align-items:end;margin:0 0 1rem}
form.issue-filters input[type=search],form.issue-filters input[type=text],form.issue-filters select{width:100%;padding:.4rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);font:inherit}
form.issue-filters .filter-buttons{display:flex;gap:.6rem;align-items:center;flex-wrap:wrap}form.issue-filters .filter-buttons a{text-decoration:underline}
li.issue-row .muted a{color:inherit;text-decoration:underline}
.badge.state-closed{color:#8250df;border-color:#8250df}.badge.state-closed.not-planned{color:var(--muted);border-color:var(--muted)}
@media (prefers-color-scheme:dark){.badge.state-closed{color:#ab7df8;border-color:#ab7df8}}
.label{display:inline-flex;gap:.3rem;align-items:center;padding:0 .5rem;margin:0 .25rem .2rem 0;border:1px solid var(--line);border-radius:1rem;font-size:.8rem;color:var(--fg);background:var(--bg);vertical-align:middle}
a.label:hover,a.label:focus{text-decoration:underline}img.swatch{display:inline-block;flex:none}
p.labels{margin:0 0 .5rem}
.issue-layout ol.timeline>li.comment-item{color:var(--fg)}
article.comment.box{margin:0}article.comment.box>header{justify-content:space-between}
article.description{margin:0 0 1rem}
ol.timeline>li.event a.who,ol.timeline>li.event span.who{font-weight:600;color:var(--fg)}
ol.timeline>li.event del,ol.timeline>li.event ins{text-decoration:none;font-weight:600;color:var(--fg)}ol.timeline>li.event del{text-decoration:line-through}
section.comment-area{display:grid;gap:1rem;margin:0 0 1rem}
form.state-form fieldset{max-width:32rem}
aside.issue-side .pad>ul.plain{list-style:none;margin:0 0 .5rem;padding:0}aside.issue-side a{text-decoration:underline}aside.issue-side a.label{text-decoration:none}
details.picker-menu{margin:.3rem 0 0}details.picker-menu>summary{list-style:none;cursor:pointer}details.picker-menu>summary::-webkit-details-marker{display:none}
details.picker-menu form{display:grid;gap:.5rem;margin-top:.5rem}
fieldset.picker .picker-list{display:grid;gap:.2rem;max-height:16rem;overflow:auto}
label.check{display:flex;gap:.4rem;align-items:center;font-weight:400}
.pickers{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:1rem}
form.issue-form input[type=text]{max-width:48rem}
p.closed-note{margin:0 0 1rem;padding:.5rem .8rem;border:1px solid var(--line);border-radius:6px;background:var(--soft)}
li.label-row{display:flex;gap:1rem;align-items:flex-start;justify-content:space-between;flex-wrap:wrap}
.label-actions{display:flex;gap:.6rem;align-items:flex-start;flex-wrap:wrap}
details.edit-label>summary{list-style:none}details.edit-label>summary::-webkit-details-marker{display:none}
form.label-form{display:grid;grid-template-columns:auto minmax(0,1fr);gap:.4rem .6rem;align-items:center;margin:.5rem 0;max-width:32rem}form.label-form label{font-weight:600}form.label-form>div{grid-column:1/-1}
@media (max-width:40rem){form.label-form{grid-template-columns:minmax(0,1fr)}}
`;
