/**
 * Integers in a query string are written as integers. The validator converts query values by
 * their schema (they are text on the wire), and JavaScript's conversion takes `1e2`, `0x10`,
 * `Infinity` and `1e400` for numbers; only digits, with an optional minus sign, pass here. The
 * range is the schema's and the validator's to check.
 */
import type { RequestHandler } from 'express';
import { type OpenApiDocument, eachOperation } from '../kernel/contract.js';
import { badRequest } from '../kernel/problem.js';

const INTEGER = /^-?(0|[1-9]\d{0,14})$/;

type Parameter = { name?: string; in?: string; schema?: { type?: unknown }; $ref?: string };

function resolve(doc: OpenApiDocument, p: Parameter): Parameter {
  const ref = p.$ref?.match(/^#\/components\/parameters\/(.+)$/)?.[1];
  if (!ref) return p;
  return (doc.components as { parameters?: Record<string, Parameter> } | undefined)?.parameters?.[ref] ?? p;
}

/** operationId → the names of its integer query parameters. */
function integerQueryParameters(doc: OpenApiDocument): Map<string, string[]> {
  const byOperation = new Map<string, string[]>();
  for (const { op, item } of eachOperation(doc)) {
    if (!op.operationId) continue;
    const shared = (item.parameters as Parameter[] | undefined) ?? [];
    const names = [...shared, ...((op.parameters as Parameter[] | undefined) ?? [])]
      .map((p) => resolve(doc, p))
      .filter((p) => p.in === 'query' && p.schema?.type === 'integer' && p.name)
      .map((p) => p.name!);
    if (names.length) byOperation.set(op.operationId, names);
  }
  return byOperation;
}

export function strictQueryIntegers(doc: OpenApiDocument): RequestHandler {
  const byOperation = integerQueryParameters(doc);
  return function strictQueryIntegers(req, _res, next) {
    const names = byOperation.get(req.openapi?.schema.operationId ?? '');
    if (!names) return next();
    const query = req.query as Record<string, unknown>;
    const wrong = names.filter((n) => typeof query[n] === 'string' && !INTEGER.test(query[n] as string));
    if (!wrong.length) return next();
    next(
      badRequest(
        `The request does not match the API contract: ${wrong.map((n) => `/query/${n} must be an integer written in digits`).join('; ')}.`,
        wrong.map((n) => ({ path: `/query/${n}`, message: 'must be an integer written in digits' })),
      ),
    );
  };
}
