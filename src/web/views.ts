/**
 * The web application's pages: plain server-rendered HTML that works without JavaScript
 * (a script only adds the copy button), labelled form controls, a visible focus ring, one
 * column on a narrow screen. Every value is escaped; nothing is loaded from another origin.
 */
import { escapeHtml } from '../kernel/text.js';

const esc = (v: unknown): string => escapeHtml(String(v ?? ''));

/** HTML that is already safe (built from escaped parts). */
export type Html = { html: string };
export const raw = (html: string): Html => ({ html });
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (isHtml(x) ? x.html : esc(x))).join('') : isHtml(v) ? v.html : esc(v);
    out += part + strings[i + 1]!;
  });
  return { html: out };
}
const isHtml = (v: unknown): v is Html => typeof v === 'object' && v !== null && 'html' in v;

/**
 * Text a person wrote, shown in a page: escaped, and isolated (`<bdi>`), so that a bidi control
 * inside it (U+202E, which body text may carry) reorders nothing but itself: not the words, the
 * ids or the buttons around it.
 */
export const userText = (v: unknown): Html => ({ html: `<bdi>${esc(v)}</bdi>` });

/** A moment as every page shows it, to the minute: `2026-11-27 14:05 UTC` (an RFC 3339 text or a Date). */
export const utcMinute = (d: Date | string): string =>
  `${(typeof d === 'string' ? d : d.toISOString()).slice(0, 16).replace('T', ' ')} UTC`;

/** Served as /assets/favicon.svg and /favicon.ico: a hull on a blue tile. */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b5cad"/><path d="M6 18h20l-3 7H9z" fill="#fff"/><path d="M16 5v11M16 6l7 9h-7" stroke="#fff" stroke-width="2" fill="none"/></svg>`;

/** Served as /assets/web.css (the pages' CSP allows styles and scripts from this origin only). */
export const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #fff; --line: #d0d7de; --accent: #0b5cad; --bad: #b42318; --ok: #1a7f37; --button: #0b5cad; --button-bad: #b42318; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9da7b3; --bg: #0d1117; --line: #30363d; --accent: #4493f8; --bad: #f85149; --ok: #3fb950; --button: #1f6feb; --button-bad: #b62324; } }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
body > .site-header, body > main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
body > .wide-main { max-width: none; padding: 0; }
body > .site-header { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; border-bottom: 1px solid var(--line); }
body > .site-header .brand { font-weight: 700; margin-right: auto; }
body > .site-header nav > ul, body > .site-header > ul { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; margin: 0; padding: 0; }
:where(body > .site-header, .page) a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
:where(.page) label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
:where(.page) :is(input[type=text], input[type=email], input[type=password], input[type=date], select) { width: 100%; max-width: 28rem; padding: .5rem; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
:where(.page) fieldset { border: 1px solid var(--line); border-radius: 6px; margin: .75rem 0; max-width: 40rem; }
:where(.page) fieldset label { font-weight: 400; display: flex; gap: .5rem; align-items: baseline; margin: .25rem 0; }
:where(.page) fieldset.scope-area { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 0 1rem; margin: .5rem 0; }
:where(.page) fieldset.scope-area legend { font-weight: 600; }
:where(.page) :is(button, .button) { display: inline-block; padding: .5rem 1rem; font: inherit; border-radius: 6px; border: 1px solid var(--button); background: var(--button); color: #fff; cursor: pointer; text-decoration: none; }
:where(.page) button.danger { background: var(--button-bad); border-color: var(--button-bad); }
:where(.page) button.secondary { background: var(--bg); color: var(--fg); border-color: var(--line); }
:where(.page) dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
:where(.page) dl.facts :is(dt, dd) { margin: 0; overflow-wrap: anywhere; }
:where(.page) dl.facts dt { font-weight: 600; }
:where(.page) textarea.wide { width: 100%; max-width: 28rem; }
:where(body > .site-header) button.link { font: inherit; cursor: pointer; background: none; border: none; color: var(--accent); padding: 0; text-decoration: underline; }
:where(.page) .hint, .reference-intro { color: var(--muted); font-size: .9rem; margin: .25rem 0; }
:where(.page) .error { color: var(--bad); }
:where(.page) .errors { border: 2px solid var(--bad); border-radius: 6px; padding: .5rem 1rem; }
.notice { border: 2px solid var(--ok); border-radius: 6px; padding: .5rem 1rem; }
:where(.page) .token { font: 1rem ui-monospace, monospace; word-break: break-all; padding: .5rem; border: 1px dashed var(--line); display: block; }
:where(.page) table { border-collapse: collapse; width: 100%; }
:where(.page) :is(th, td) { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
:where(.page) .status-active { color: var(--ok); font-weight: 600; }
:where(.page) .nowrap { white-space: nowrap; }
:where(.page) .soon { display: inline-block; color: var(--bad); font-weight: 600; font-size: .9rem; }
:where(.page) .page-head { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; }
:where(.page) .page-head h1 { margin-right: auto; }
:where(.page) :is(.status-expired, .status-revoked) { color: var(--muted); font-weight: 600; }
:where(.page) tr.unfamiliar td:first-child { border-left: 4px solid var(--bad); }
:where(.page) code.wrap { overflow-wrap: anywhere; }
:where(.page) ul.addresses { margin: .25rem 0; padding-left: 1.25rem; }
:where(.page) form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; }
:where(.page) form.filters .field { display: flex; flex-direction: column; gap: .25rem; flex: 1 1 12rem; max-width: 20rem; }
:where(.page) form.filters label { margin: 0; }
:where(.page) form.filters select { width: 100%; }
:where(.page) :is(h1, h2, h3) { overflow-wrap: anywhere; }
:where(.page) .tagline { font-size: 1.15rem; color: var(--muted); margin-top: 0; }
:where(.page) ol.roadmap { padding-left: 1.5rem; }
:where(.page) ol.roadmap > li { margin: .5rem 0; padding: .25rem 0; border-bottom: 1px solid var(--line); }
:where(.page) .badge { display: inline-block; padding: 0 .5rem; border: 1px solid currentColor; border-radius: 1rem; font-size: .85rem; font-weight: 600; }
:where(.page) .overdue, :where(.page) .health-off_track { color: var(--bad); }
:where(.page) .health-on_track, :where(.page) .status-done { color: var(--ok); }
:where(.page) article.build-log { border-top: 1px solid var(--line); padding: .5rem 0; }
:where(.page) article.build-log img, :where(.page) .post-body img { max-width: 100%; height: auto; }
:where(.page) .meta { color: var(--muted); font-size: .9rem; margin: .25rem 0; }
:where(.page) ul.people { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; }
@media (max-width: 40rem) {
  :where(.page:not(.doc)) :is(table, thead, tbody, tr, th, td) { display: block; }
  :where(.page:not(.doc)) thead { position: absolute; left: -9999px; }
  :where(.page:not(.doc)) tr { border: 1px solid var(--line); border-radius: 6px; margin: .75rem 0; padding: .25rem; }
  :where(.page:not(.doc)) td { border: none; padding: .25rem .5rem; }
  :where(.page:not(.doc)) td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  :where(.page:not(.doc)) caption { display: block; text-align: left; }
  :where(.page.doc) :is(th, td) { padding: .25rem; overflow-wrap: anywhere; }
  :where(.page.doc) :not(pre) > code { overflow-wrap: anywhere; }
}

.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
:where(.page) :is(code, pre) { font-family: ui-monospace, monospace; }
:where(.page) pre { overflow-x: auto; padding: .5rem; border: 1px solid var(--line); border-radius: 6px; }
.reference-intro { max-width: 60rem; margin: .5rem auto; padding: 0 1rem; }
`;

export type PageUser = { username: string; displayName: string; isAdmin: boolean } | undefined;

/**
 * `wide`: the main area spans the window, for the API reference, which draws its own columns and
 * its own main landmark. `doc`: a page of the repository's Markdown, whose tables stay tables on a
 * phone (their cells wrap) instead of becoming the cards of the pages' own lists.
 */
export function page(
  title: string,
  user: PageUser,
  csrf: string,
  body: Html,
  opts: { wide?: boolean; doc?: boolean; head?: Html } = {},
): string {
  const items = user
    ? html`<ul>
        <li><a href="/settings/keys">Manage API keys</a></li>
        <li><a href="/settings/profile">Profile</a></li>
        <li><a href="/settings/github">GitHub</a></li>
        <li><a href="/settings/webhooks">Webhooks</a></li>
        <li><a href="/settings/security-log">Security log</a></li>
        <li><a href="/docs">API reference</a></li>
        ${user.isAdmin ? html`<li><a href="/admin/moderation">Moderation</a></li>` : ''}
        <li><form method="post" action="/signout"><input type="hidden" name="_csrf" value="${csrf}"><button class="link" type="submit">Sign out ${userText(user.username)}</button></form></li>
      </ul>`
    : html`<ul><li><a href="/signin">Sign in</a></li><li><a href="/signup">Sign up</a></li><li><a href="/docs">API reference</a></li></ul>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${csrf ? `<meta name="csrf-token" content="${esc(csrf)}">\n` : ''}<title>${esc(title)} · Shipyard</title>${opts.head?.html ?? ''}<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/assets/web.css"><script src="/assets/web.js" defer></script></head>
<body>${
    // The API reference draws its own banner on a narrow screen: there the site's header is a plain block.
    opts.wide
      ? `<nav class="site-header" aria-label="Main"><a class="brand" href="/">Shipyard</a>${items.html}</nav>`
      : `<header class="site-header"><a class="brand" href="/">Shipyard</a><nav aria-label="Main">${items.html}</nav></header>`
  }
${
  // A wide page (the API reference) is drawn by a component with its own main landmark.
  opts.wide
    ? `<div id="main" class="wide-main">${body.html}</div>`
    : `<main id="main" class="page${opts.doc ? ' doc' : ''}">${body.html}</main>`
}</body></html>`;
}

export const errorList = (errors: string[]): Html =>
  errors.length
    ? html`<div class="errors" role="alert" id="form-errors"><p><strong>Please correct the following:</strong></p><ul>${errors.map((e) => html`<li>${e}</li>`)}</ul></div>`
    : raw('');

/**
 * One field's part of a form's errors (each message begins with the field's label and a colon):
 * the attributes that mark the field (`aria-invalid`, and `aria-describedby` naming its hint and
 * its message), and the message to show beside it.
 */
/** A field's problem without its label, as a sentence of its own beside the field. */
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

export function fieldError(
  errors: readonly string[],
  label: string,
  id: string,
  hint?: string,
): { attrs: Html; message: Html } {
  const found = errors.filter((e) => e.startsWith(`${label}:`));
  const described = [hint, found.length ? `${id}-error` : undefined].filter(Boolean).join(' ');
  return {
    attrs: raw(`${described ? `aria-describedby="${described}"` : ''}${found.length ? ' aria-invalid="true"' : ''}`),
    message: found.length
      ? html`<p class="error" id="${id}-error">${found.map((e) => sentence(e.slice(label.length + 1).trim())).join(' ')}</p>`
      : raw(''),
  };
}

/** Served as /assets/web.js: progressive enhancement only (the copy button); every flow works without it. */
export const SCRIPT = `
document.querySelectorAll('[data-copy]').forEach((button) => {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.getAttribute('data-copy'));
    try { await navigator.clipboard.writeText(source.textContent.trim()); button.textContent = 'Copied'; }
    catch { const range = document.createRange(); range.selectNodeContents(source); getSelection().removeAllRanges(); getSelection().addRange(range); button.textContent = 'Selected: press Ctrl+C'; }
  });
});
document.querySelectorAll('[data-expiry]').forEach((select) => {
  const date = document.getElementById('expires-on-field');
  const dateInput = document.getElementById('key-expires-on');
  const preview = document.getElementById('expiry-preview');
  const sync = () => {
    date.hidden = select.value !== 'date';
    if (select.value === 'date') {
      const v = dateInput.value;
      preview.textContent = !v ? 'Choose the date below.'
        : v < dateInput.min || v > dateInput.max ? 'Choose a date from ' + dateInput.min + ' to ' + dateInput.max + '.'
        : 'The key expires at the end of ' + v + ' (UTC).';
    } else {
      const at = new Date(Date.now() + Number(select.value) * 86400000).toISOString().slice(0, 10);
      preview.textContent = 'The key expires on ' + at + ' (UTC).';
    }
  };
  select.addEventListener('change', sync); dateInput.addEventListener('input', sync); sync();
});
`;
