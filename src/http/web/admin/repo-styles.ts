// Styles of the repository settings (issue 33): the settings sub-nav beside the section on a wide
// screen and above it on a phone, and the danger zone. Only the shared CSS variables, so both
// themes follow.

/** Appended to the site stylesheet. */
export const REPO_SETTINGS_CSS = `
.settings{display:grid;grid-template-columns:12rem minmax(0,1fr);gap:1.2rem;align-items:start}
nav.subnav{display:flex;flex-direction:column;border:1px solid var(--line);border-radius:6px;overflow:hidden}
nav.subnav a{padding:.45rem .8rem;border-top:1px solid var(--line);color:var(--fg)}nav.subnav a:first-child{border-top:0}
nav.subnav a[aria-current]{background:var(--soft);font-weight:600;box-shadow:inset 3px 0 0 var(--link)}
.ul nav.subnav a{text-decoration:none}.ul nav.subnav a:hover,.ul nav.subnav a:focus{text-decoration:underline}
.settings-body>.notice{margin:0 0 1rem}.box>.notice{margin:.6rem .8rem}
.settings-body fieldset{border:1px solid var(--line);border-radius:6px;padding:.4rem .8rem;display:grid;gap:.3rem}
.settings-body input[type=number]{padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);width:6rem}
.danger-zone{border-color:var(--bad)}.danger-zone>header{border-bottom-color:var(--bad)}
@media (max-width:40rem){.settings{grid-template-columns:1fr}nav.subnav{flex-direction:row;flex-wrap:wrap}nav.subnav a{border-top:0;border-right:1px solid var(--line)}}
`;
