/** axe-core in a test's browser page. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The widths every page is checked at: a phone's and a laptop's. */
const WIDTHS = [390, 1280] as const;

/**
 * axe-core's violations of any impact on the page as it is, at each of `WIDTHS`. axe is evaluated
 * in the page through the DevTools protocol, which the page's CSP does not govern: the page runs
 * under its own CSP meanwhile, so one visit checks both. The page is left at the last width.
 */
export async function violations(page: Page, skipped: readonly string[] = []): Promise<string[]> {
  const found: string[] = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    found.push(...(await violationsNow(page, skipped)).map((v) => `${width} px: ${v}`));
  }
  return found;
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
