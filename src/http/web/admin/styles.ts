// Styles of the administration and CI pages: settings tabs, tables, inline forms, notices, the
// once-shown secrets, state badges. Only the shared CSS variables, so both themes follow. Links
// inside these pages (`.ul`) are underlined: in the dark theme the link colour alone is too close
// to the text colour to tell a link in running text apart (axe: link-in-text-block).

/** Appended to the site stylesheet. */
export const ADMIN_CSS = `
nav.tabs{display:flex;gap:.2rem;flex-wrap:wrap;border-bottom:1px solid var(--line);margin:0 0 1rem}
nav.tabs a{padding:.4rem .8rem;border:1px solid transparent;border-bottom:0;border-radius:6px 6px 0 0;color:var(--fg)}
nav.tabs a[aria-current]{border-color:var(--line);background:var(--soft);font-weight:600}
table.grid{width:100%;border-collapse:collapse}table.grid th,table.grid td{text-align:left;padding:.45rem .8rem;border-top:1px solid var(--line);vertical-align:top}
table.grid thead th{border-top:0;font-size:.85rem;color:var(--muted)}
form.row{display:flex;gap:.6rem;flex-wrap:wrap;align-items:flex-end;padding:.6rem .8rem;margin:0}
form.row label{font-weight:600}form.row p{flex-basis:100%}form.stack.wide{max-width:36rem}
label.check{display:flex;gap:.4rem;align-items:center;font-weight:400}
input[type=url],input[type=date],input[type=search],select,textarea{padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);font:inherit}
textarea{width:100%;resize:vertical}input[type=url]{width:100%;min-width:16rem}
button.danger{color:var(--bad)}
.notice{padding:.5rem .8rem;border:1px solid var(--line);border-radius:6px;background:var(--soft)}.notice.ok{border-color:var(--accent)}
.secret{border-color:var(--accent)}
.scroll{position:relative}
.ul a:not(.button){text-decoration:underline}.ul nav.tabs a{text-decoration:none}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1.2rem;margin:0;padding:.6rem .8rem}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
code.data{word-break:break-all}
.state{font-weight:600}.state-success,.state-online{color:var(--accent)}.state-failure,.state-cancelled{color:var(--bad)}.state-running,.state-busy{color:var(--link)}.state-queued,.state-offline,.state-pending,.state-skipped{color:var(--muted)}
`;

/** The repository settings (issue 33): the sub-nav beside the section on a wide screen, above it on a phone; the danger zone. */
export const REPO_SETTINGS_CSS = `
.settings{display:grid;grid-template-columns:12rem minmax(0,1fr);gap:1.2rem;align-items:start}
nav.subnav{display:flex;flex-direction:column;border:1px solid var(--line);border-radius:6px;overflow:hidden}
nav.subnav a{padding:.45rem .8rem;border-top:1px solid var(--line);color:var(--fg)}nav.subnav a:first-child{border-top:0}
nav.subnav a[aria-current]{background:var(--soft);font-weight:600;box-shadow:inset 3px 0 0 var(--link)}
.ul nav.subnav a{text-decoration:none}.ul nav.subnav a:hover,.ul nav.subnav a:focus{text-decoration:underline}
.settings-body>.notice{margin:0 0 1rem}.box>.notice{margin:.6rem .8rem}
.settings-body fieldset{border:1px solid var(--line);border-radius:6px;padding:.4rem .8rem;display:grid;gap:.3rem}
.settings-body input[type=number]{padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);width:6rem}
li.protection{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:.2rem .8rem}li.protection details{grid-column:1/-1}li.protection p{margin:.2rem 0 0}
.danger-zone{border-color:var(--bad)}.danger-zone>header{border-bottom-color:var(--bad)}
@media (max-width:40rem){.settings{grid-template-columns:1fr}nav.subnav{flex-direction:row;flex-wrap:wrap}nav.subnav a{border-top:0;border-right:1px solid var(--line)}}
`;
