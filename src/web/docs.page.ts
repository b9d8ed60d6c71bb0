/**
 * /docs: the API reference, rendered on the server from the bundled contract (the same file
 * the validator uses), so it cannot drift and needs nothing from another origin. Built once.
 */
import type { Request, Response } from 'express';
import { basePath, listOperations, type OpenApiDocument, type OperationObject } from '../http/contract.js';
import { html, page, type Html } from './views.js';

type Param = {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: { type?: unknown; format?: string; enum?: unknown[] };
};
type MediaType = { schema?: { $ref?: string }; example?: unknown };
type Op = OperationObject & {
  tags?: string[];
  parameters?: Param[];
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>;
};

const anchor = (s: string) => s.replace(/[^A-Za-z0-9]+/g, '-');
const refName = (ref?: string) => ref?.split('/').pop();

export function docsPage(doc: OpenApiDocument) {
  const base = basePath(doc);
  const ops = listOperations(doc).map((o) => {
    const item = doc.paths[o.path] as Record<string, unknown> & { parameters?: Param[] };
    const op = item[o.method] as Op;
    return { ...o, op, params: [...(item.parameters ?? []), ...(op.parameters ?? [])] };
  });
  const tags = [...new Set(ops.map((o) => o.op.tags?.[0] ?? 'Other'))];
  const info = doc.info as { title?: string; version?: string; description?: string } | undefined;

  const access = (o: (typeof ops)[number]): Html =>
    o.access.kind === 'scope'
      ? html`Scope <code>${o.access.scope}</code>`
      : o.access.kind === 'session-only'
        ? html`Signed-in administrators only (session); every API key is refused`
        : o.access.kind === 'public'
          ? html`Public`
          : html`A key with projects.read, projects.write or content.write`;

  const operation = (o: (typeof ops)[number]): Html => {
    const body = o.op.requestBody?.content;
    return html`<section class="operation" id="${o.operationId}" aria-labelledby="h-${o.operationId}">
      <h3 id="h-${o.operationId}"><code>${o.method.toUpperCase()} ${base}${o.path}</code> — ${o.op.summary ?? o.operationId}</h3>
      <p class="hint">operationId <code>${o.operationId}</code> · ${access(o)}</p>
      ${o.op.description ? html`<p>${o.op.description}</p>` : ''}
      ${o.params.length ? html`<h4>Parameters</h4><ul>${o.params.map((p) => html`<li><code>${p.name}</code> (${p.in}${p.required ? ', required' : ''}${p.schema?.type ? html`, ${String(p.schema.type)}` : ''}${p.schema?.format ? html`, ${p.schema.format}` : ''}) ${p.description ?? ''}</li>`)}</ul>` : ''}
      ${
        body
          ? html`<h4>Request body</h4><ul>${Object.entries(body).map(
              ([
                type,
                m,
              ]) => html`<li><code>${type}</code>${m.schema?.$ref ? html`: <a href="#schema-${refName(m.schema.$ref)}">${refName(m.schema.$ref)}</a>` : ''}
        ${m.example !== undefined ? html`<pre>${JSON.stringify(m.example, null, 2)}</pre>` : ''}</li>`,
            )}</ul>`
          : ''
      }
      <h4>Responses</h4><ul>${Object.entries(o.op.responses ?? {}).map(([status, r]) => html`<li><strong>${status}</strong> ${r.description ?? ''}</li>`)}</ul>
    </section>`;
  };

  const schemas = Object.keys(
    (doc.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {},
  ).sort();
  const rendered = page(
    'API reference',
    undefined,
    '',
    html`
    <h1>${info?.title ?? 'Shipyard API'} <span class="hint">${info?.version ?? ''}</span></h1>
    <p>Base URL <code>${base}</code>. Every request sends <code>Authorization: Bearer shipyard_pat_…</code>
      (create keys under <a href="/settings/keys">Settings → Manage API keys</a>). Errors are
      <code>application/problem+json</code>. Download the specification:
      <a href="${base}/openapi.json">openapi.json</a> · <a href="${base}/openapi.yaml">openapi.yaml</a>.</p>
    <h2>Scopes</h2>
    <table><thead><tr><th scope="col">Scope</th><th scope="col">Label</th><th scope="col">Opens</th></tr></thead><tbody>
      ${doc['x-scopes'].map((s) => html`<tr><td data-label="Scope"><code>${s.id}</code></td><td data-label="Label">${s.label}</td><td data-label="Opens">${s.opens.join(', ')}</td></tr>`)}
    </tbody></table>
    <nav aria-label="Operations"><h2>Operations</h2><ul>${tags.map((t) => html`<li><a href="#tag-${anchor(t)}">${t}</a></li>`)}</ul></nav>
    ${tags.map((t) => html`<section aria-labelledby="tag-${anchor(t)}"><h2 id="tag-${anchor(t)}">${t}</h2>${ops.filter((o) => (o.op.tags?.[0] ?? 'Other') === t).map(operation)}</section>`)}
    <h2>Schemas</h2><p>The full definitions are in the specification download.</p>
    <ul>${schemas.map((s) => html`<li id="schema-${s}"><code>${s}</code></li>`)}</ul>`,
  );
  // The page is the same for everyone: the header is rendered signed-out, its links work either way.
  return (_req: Request, res: Response) => void res.type('html').send(rendered);
}
