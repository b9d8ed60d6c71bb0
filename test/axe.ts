/** axe-core in a test's browser page. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The widths every page is checked at: a phone's and a laptop's. */
const WIDTHS = [390, 1280] as const;
/** How long a page's document must stay unchanged to count as drawn, and the longest wait for it. */
const QUIET_MS = 250;
const SETTLE_MAX_MS = 5000;

/**
 * axe-core's violations of any impact on the page as it is, at each of `WIDTHS`. axe is evaluated
 * in the page through the DevTools protocol, which the page's CSP does not govern: the page runs
 * under its own CSP meanwhile, so one visit checks both. The page is left at the last width.
 */
export async function violations(page: Page, skipped: readonly string[] = []): Promise<string[]> {
  const found: string[] = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await settled(page);
    found.push(...(await violationsNow(page, skipped)).map((v) => `${width} px: ${v}`));
  }
  return found;
}

/**
 * Waits until the page's document has not changed for QUIET_MS (at most SETTLE_MAX_MS): a page
 * that draws itself (the API reference) redraws after a change of width, and axe is meant for
 * what a reader then sees, not for a half-drawn frame. A page that stays half-drawn is checked
 * as it is once the wait ends.
 */
async function settled(page: Page): Promise<void> {
  await page.evaluate(
    ({ quiet, max }) =>
      new Promise<void>((resolve) => {
        let timer: ReturnType<typeof setTimeout>;
        const done = () => {
          observer.disconnect();
          clearTimeout(timer);
          clearTimeout(limit);
          resolve();
        };
        const observer = new MutationObserver(() => {
          clearTimeout(timer);
          timer = setTimeout(done, quiet);
        });
        observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
        timer = setTimeout(done, quiet);
        const limit = setTimeout(done, max);
      }),
    { quiet: QUIET_MS, max: SETTLE_MAX_MS },
  );
}

async function violationsNow(page: Page, skipped: readonly string[]): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  return page.evaluate(async (off) => {
    type Axe = { run: (d: Document, o: object) => Promise<{ violations: any[] }> };
    const { run } = (window as unknown as { axe: Axe }).axe;
    const { violations } = await run(document, {
      rules: Object.fromEntries(off.map((id) => [id, { enabled: false }])),
    });
    return violations.map(
      (v) => `${v.id} (${v.impact}): ${v.nodes.map((n: { target: string[] }) => n.target.join(' ')).join(', ')}`,
    );
  }, skipped);
}
