/** axe-core in a test's browser page. */
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** The widths every page is checked at: a phone's and a laptop's. */
const WIDTHS = [390, 1280] as const;

/**
 * axe-core's violations of any impact on the page as it is, at each of `WIDTHS` (injected: the
 * context must bypass the CSP). The page is left at the last width.
 */
export async function violations(page: Page): Promise<string[]> {
  const found: string[] = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    found.push(...(await violationsNow(page)).map((v) => `${width} px: ${v}`));
  }
  return found;
}

async function violationsNow(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const run = (window as unknown as { axe: { run: (d: Document) => Promise<{ violations: any[] }> } }).axe.run;
    const { violations } = await run(document);
    return violations.map(
      (v) => `${v.id} (${v.impact}): ${v.nodes.map((n: { target: string[] }) => n.target.join(' ')).join(', ')}`,
    );
  });
}
