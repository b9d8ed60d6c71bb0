import { loadContract, type OpenApiDocument } from '../src/kernel/contract.js';

export const DEPRECATED_AT = '2026-11-01T00:00:00Z';
export const SUNSET = '2027-06-01T00:00:00Z';

/**
 * A fixture: the real contract with GET /platform/versions (`getVersions`) marked deprecated,
 * its responses declaring the deprecation headers as codegen/bundle.ts writes them for one.
 */
export function contractWithDeprecatedVersions(): OpenApiDocument {
  const doc = structuredClone(loadContract()) as OpenApiDocument & {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  const op = doc.paths['/platform/versions']!.get!;
  Object.assign(op, { deprecated: true, 'x-deprecated-at': DEPRECATED_AT, 'x-sunset': SUNSET });
  const shared = (doc.components as { responses: Record<string, object> }).responses;
  const responses = op.responses as Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
  for (const [status, response] of Object.entries(responses)) {
    const own = response.$ref
      ? (structuredClone(shared[response.$ref.split('/').pop()!]) as typeof response)
      : response;
    own.headers = {
      ...own.headers,
      Deprecation: { schema: { type: 'string' } },
      Sunset: { schema: { type: 'string' } },
      Link: { schema: { type: 'string' } },
    };
    responses[status] = own;
  }
  return doc;
}
