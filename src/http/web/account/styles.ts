// Styles of the account pages: forms beyond sign-in, the settings menu, a person's page and the
// contribution graph (its colours per level, light and dark, by class: the SVG carries no style).
// Links inside running text are underlined: colour alone does not set them apart (WCAG 1.4.1).
export const ACCOUNT_CSS = `
main p a:not(.button),main td a{text-decoration:underline;text-underline-offset:.15em}
textarea,input[type=url]{font:inherit;color:inherit;padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);width:100%}
select{padding:.4rem .5rem;border:1px solid var(--line);border-radius:6px;background:var(--bg)}
fieldset{border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;display:grid;gap:.5rem;min-width:0}legend{font-weight:600;padding:0 .3rem}
label.check{display:flex;gap:.5rem;align-items:baseline;font-weight:400}
form.stack.wide{max-width:40rem}.hint{margin:-.5rem 0 0;font-size:.85rem}
.link-row{display:grid;grid-template-columns:1fr 2fr;gap:.5rem}
.notice{border:1px solid var(--accent);border-radius:6px;padding:.5rem .8rem}
.badge.warn{border-color:var(--bad);color:var(--bad)}
.home-grid{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:1rem;align-items:start}
ul.activity>li{overflow-wrap:anywhere;display:flex;gap:.5rem;align-items:flex-start}ul.activity>li>div{min-width:0}ul.activity>li>div a,.home-grid nav li>a{text-decoration:underline;text-underline-offset:.15em}
ul.activity ul.commits,ul.activity ul.refs{list-style:none;margin:.2rem 0 0;padding:0;font-size:.9rem}ul.activity ul.commits{border-left:2px solid var(--line);padding-left:.6rem}
.settings{display:grid;grid-template-columns:12rem minmax(0,1fr);gap:1.5rem;align-items:start}
.settings-nav ul,.tabs ul,ul.plain{list-style:none;margin:0;padding:0}
.settings-nav li a{display:block;padding:.35rem .6rem;border-radius:6px}.settings-nav a[aria-current]{background:var(--soft);font-weight:700}
.email-row,.cred{display:flex;gap:.6rem;justify-content:space-between;align-items:center;flex-wrap:wrap}.addr{overflow-wrap:anywhere}.actions{display:flex;gap:.4rem;flex-wrap:wrap}
.secret{border-color:var(--accent)}
.profile{display:grid;grid-template-columns:16rem minmax(0,1fr);gap:1.5rem;align-items:start}
.profile-card h1{display:grid;margin-top:0}.p-handle{font-weight:400;font-size:1.1rem}.p-bio{white-space:pre-line;overflow-wrap:anywhere}
.tabs ul{display:flex;gap:1rem;flex-wrap:wrap;border-bottom:1px solid var(--line);margin-bottom:1rem}.tabs a{display:inline-block;padding:.4rem 0}.tabs a[aria-current]{font-weight:700;border-bottom:2px solid var(--accent)}
ul.pins{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:.6rem}ul.pins>li{margin:0}
.graph-wrap{overflow-x:auto;padding:.6rem .8rem}.graph{display:block}
.g-text{fill:var(--muted);font-size:9px}
.g-l0{fill:#ebedf0}.g-l1{fill:#9be9a8}.g-l2{fill:#40c463}.g-l3{fill:#30a14e}.g-l4{fill:#216e39}
@media (prefers-color-scheme:dark){button.primary{background:#238636;border-color:#238636}}
@media (prefers-color-scheme:dark){.g-l0{fill:#161b22}.g-l1{fill:#0e4429}.g-l2{fill:#006d32}.g-l3{fill:#26a641}.g-l4{fill:#39d353}}
.g-cell{stroke:var(--line);stroke-width:.5}
.g-legend{display:flex;gap:.3rem;align-items:center;justify-content:flex-end;padding:0 .8rem;margin:0;font-size:.8rem}
table.g-table{border-collapse:collapse;margin-top:.5rem}table.g-table th,table.g-table td{text-align:left;padding:.2rem .6rem;border-top:1px solid var(--line)}
img.avatar{border-radius:50%;vertical-align:middle;object-fit:cover;background:var(--soft);flex:none}
a.me{display:inline-flex;gap:.35rem;align-items:center}
.avatar-row{display:flex;gap:1rem;align-items:flex-start;flex-wrap:wrap}
.org-head{display:flex;gap:1rem;align-items:flex-start}.org-head>div{min-width:0}.org-head h1{margin-top:.3rem}
.org-grid{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:1rem;align-items:start}.org-grid.solo{grid-template-columns:minmax(0,1fr)}
ul.people a{display:inline-flex;gap:.5rem;align-items:center;min-width:0;overflow-wrap:anywhere}
.profile-card img.avatar{display:block;margin-top:.5rem}
@media (max-width:40rem){.home-grid,.settings,.profile,.link-row,.org-grid{grid-template-columns:minmax(0,1fr)}}
`;
