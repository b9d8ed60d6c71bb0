/**
 * /docs: the API reference, rendered in the browser by Scalar (@scalar/api-reference, its
 * standalone bundle from this project's own dependencies) from the contract this server serves
 * at /api/v1/openapi.json. Nothing comes from another origin: Scalar's fonts, telemetry, proxy,
 * AI agent and hosted client are turned off (docs/decisions/0006-api-reference-scalar.md).
 * Without JavaScript the page says so and links the contract itself.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import type { Request, Response } from 'express';
import { html, page } from './views.js';

const gzip = promisify(gzipCb);
// The browser bundle is Scalar's published script-tag build; the package exports only its CSS paths.
const scalarDist = dirname(createRequire(import.meta.url).resolve('@scalar/api-reference/style.css'));
const SCALAR_VERSION = (
  createRequire(import.meta.url)(join(scalarDist, '..', 'package.json')) as {
    version: string;
  }
).version;
/** Versioned, so it can be cached for a year and a new release is fetched at once. */
export const SCALAR_PATH = `/assets/scalar/${SCALAR_VERSION}/standalone.js`;

/**
 * Only /docs gets these two exceptions to the pages' policy: Scalar sets inline styles, and it
 * fetches the contract and sends "try it" requests to this origin. Still no other host.
 */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Runs before the bundle: the zod inside it would otherwise probe `Function('')`, which the CSP refuses. */
export const DOCS_SETUP_SCRIPT = 'globalThis.__zod_globalConfig = { jitless: true };\n';

/**
 * Scalar's theme with text at 4.5:1 or more on its own backgrounds (axe-core's color-contrast):
 * its greys and HTTP-method colours are a little too light in light mode, too dark in dark mode.
 */
export const DOCS_STYLE = `
html .light-mode {
  --scalar-color-2: #5f5f5f; --scalar-color-3: #646464; --scalar-color-accent: #0062a8;
  --scalar-color-blue: #0062a8; --scalar-color-green: #04704b; --scalar-color-red: #c00004;
  --scalar-color-yellow: #7a5900; --scalar-color-orange: #a83a00; --scalar-color-purple: #5203d1; --scalar-color-query: #006468;
}
/* A section Scalar focuses when a link opens it is not a control: no focus ring around it. */
#reference-root [tabindex="-1"]:focus-visible { outline: none; }
/* The authentication box's header: when its column is narrow, the scheme picker goes under
   "Authentication Required" instead of cutting "Required" off. */
#reference-root div:has(> button [data-testid="auth-indicator"]) { flex-wrap: wrap; }
#reference-root button:has([data-testid="auth-indicator"]) { flex: 1 0 auto; }
#reference-root div:has(> button [data-testid="auth-indicator"]) > div { padding-left: .5rem; }
html .dark-mode {
  --scalar-color-2: #b4b4b4; --scalar-color-3: #a0a0a0; --scalar-color-accent: #4eb8ff;
  --scalar-color-blue: #6cc0f0; --scalar-color-green: #2fd36f; --scalar-color-red: #ff6b69;
  --scalar-color-yellow: #ffd24d; --scalar-color-orange: #ffa070; --scalar-color-purple: #c4abfb; --scalar-color-query: #7fdcd7;
}
`;

/** Scalar's configuration: this server for "try it", nothing from another origin, each operation's scope shown. */
export const DOCS_SCRIPT = `
Scalar.createApiReference('#reference-root', {
  url: '/api/v1/openapi.json',
  servers: [{ url: location.origin + '/api/v1', description: 'This server' }],
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  hideClientButton: true,
  documentDownloadType: 'json',
  persistAuth: false,
  authentication: {
    preferredSecurityScheme: 'bearerAuth',
    // "Authorize" signs in as this site's own public client: the person approves on the consent
    // screen, and the key it gives is listed on Settings → Manage API keys.
    securitySchemes: {
      oauth2: {
        flows: {
          authorizationCode: {
            'x-scalar-client-id': 'shipyard-reference',
            'x-scalar-redirect-uri': location.origin + '/docs/oauth-callback',
            'x-usePkce': 'SHA-256',
          },
        },
      },
    },
  },
  proxyUrl: '',
  externalUrls: { dashboardUrl: '', registryUrl: '', proxyUrl: '', apiBaseUrl: '' },
  plugins: [() => ({
    name: 'shipyard-access',
    extensions: [
      { name: 'x-required-scope', component: (op) => 'Required scope: ' + op['x-required-scope'] },
      { name: 'x-session-only', component: (op) => (op['x-session-only'] ? 'Web session only: every API key is refused' : '') },
    ],
  })],
});

// What Scalar leaves out for assistive technology, added as it draws: a name for its icon-only
// buttons, the visible words in a button's accessible name, and keyboard reach for a region
// that scrolls.
const named = (el) => el.getAttribute('aria-label') || el.getAttribute('title') || el.textContent.trim();
function accessible(root) {
  root.querySelectorAll('button').forEach((button) => {
    // A copy button's words are hidden until the code block is hovered: it gets a name of its own.
    if (button.className.includes('copy-button') && !button.getAttribute('aria-label')) button.setAttribute('aria-label', 'Copy to clipboard');
    else if (!named(button)) button.setAttribute('aria-label', 'More');
    const label = button.getAttribute('aria-label');
    const visible = button.textContent.trim();
    if (label && visible && !label.toLowerCase().includes(visible.toLowerCase())) button.setAttribute('aria-label', visible + ': ' + label);
  });
  root.querySelectorAll('ul.endpoints, pre, .scalar-codeblock-pre').forEach((region) => {
    if (region.scrollHeight > region.clientHeight || region.scrollWidth > region.clientWidth) {
      if (!region.hasAttribute('tabindex')) region.setAttribute('tabindex', '0');
    }
  });
}
// The site's header and the intro sit above the reference, and scroll away with the page. Scalar
// sizes its sidebar (on a phone, its menu) to the window less --scalar-custom-header-height and
// sticks it that far down: set to how much of them is in view, the sidebar's last items and
// Scalar's footer stay on screen, and the sticky parts sit where they are until they reach the top.
const root = document.getElementById('reference-root');
let framing = false;
const frame = () => {
  framing = false;
  root.style.setProperty('--scalar-custom-header-height', Math.max(0, Math.round(root.getBoundingClientRect().top)) + 'px');
};
const reframe = () => {
  if (framing) return;
  framing = true;
  requestAnimationFrame(frame);
};
addEventListener('scroll', reframe, { passive: true });
addEventListener('resize', reframe);
frame();

let pending = false;
new MutationObserver(() => {
  // At most once a frame, however many nodes Scalar adds meanwhile.
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    accessible(document);
  });
}).observe(document.body, { childList: true, subtree: true });
`;

let bundle: Promise<{ plain: Buffer; gzipped: Buffer }> | undefined;
/** Read and compressed once, on first use (about 4 MB, 1.2 MB gzipped). */
const scalarBundle = () => {
  bundle ??= readFile(join(scalarDist, 'browser', 'standalone.js')).then(async (plain) => ({
    plain,
    gzipped: await gzip(plain, { level: 9 }),
  }));
  return bundle;
};

export async function serveScalar(req: Request, res: Response): Promise<void> {
  const { plain, gzipped } = await scalarBundle();
  const gzipOk = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  res
    .type('js')
    .set('Cache-Control', 'public, max-age=31536000, immutable')
    .set('Vary', 'Accept-Encoding')
    .set('X-Content-Type-Options', 'nosniff');
  if (gzipOk) res.set('Content-Encoding', 'gzip');
  res.send(gzipOk ? gzipped : plain);
}

export function docsPage(req: Request, res: Response): void {
  res.setHeader('Content-Security-Policy', DOCS_CSP);
  res.type('html').send(
    page(
      'API reference',
      req.web!.user,
      req.web!.csrf,
      html`
      <section aria-label="About this reference">
      <noscript><p class="notice">This reference is drawn in the browser and needs JavaScript. Without it, the contract
        itself is here: <a href="/api/v1/openapi.json">openapi.json</a> · <a href="/api/v1/openapi.yaml">openapi.yaml</a>.</p></noscript>
      <p class="hint reference-intro">The contract: <a href="/api/v1/openapi.json">openapi.json</a> ·
        <a href="/api/v1/openapi.yaml">openapi.yaml</a>. Each operation shows the scope its API key needs; press Ctrl+K (⌘K) to search.</p>
      </section>
      <div id="reference-root"></div>
      <link rel="stylesheet" href="/assets/docs.css">
      <script src="/assets/docs-setup.js"></script>
      <script src="${SCALAR_PATH}"></script>
      <script src="/assets/docs.js"></script>`,
      { wide: true },
    ),
  );
}
