/**
 * /docs/guide: how to call the API (docs/api.md) as a page, one section per area, so that each
 * operation's `externalDocs` in the reference lands on its area's heading (codegen/bundle.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';
import { markdownHtml } from './markdown.js';
import { page } from './views.js';

const GUIDE = fileURLToPath(new URL('../../docs/api.md', import.meta.url));

/** The server the examples are written for in the repository: on the served page, this server. */
const EXAMPLE_SERVER = 'SHIPYARD_URL=http://localhost:3000';

export function guidePage(publicUrl: string) {
  const body = markdownHtml(readFileSync(GUIDE, 'utf8').replaceAll(EXAMPLE_SERVER, `SHIPYARD_URL=${publicUrl}`));
  return (req: Request, res: Response): void => {
    res.type('html').send(page('Calling the API', req.web!.user, req.web!.csrf, body, { doc: true }));
  };
}
