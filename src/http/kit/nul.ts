/**
 * PostgreSQL text cannot hold U+0000, and JSON can carry it ("\u0000"). Such input is refused
 * up front with a 400 naming where it was, instead of failing in the database.
 */
import type { RequestHandler } from 'express';
import { badRequest } from '../../kernel/problem.js';

/** The JSON-pointer-like path of the first string containing U+0000, if any. */
export function findNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const hit = findNul(v, `${path}/${i}`);
      if (hit) return hit;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const hit = findNul(k, `${path}/${k}`) ?? findNul(v, `${path}/${k}`);
      if (hit) return hit;
    }
  }
  return undefined;
}

export const refuseNul: RequestHandler = (req, _res, next) => {
  const at = findNul(req.query, '/query') ?? findNul(req.body, '/body');
  if (at)
    return next(
      badRequest('Text must not contain NUL (\\u0000) characters.', [
        { path: at, message: 'must not contain NUL (\\u0000) characters' },
      ]),
    );
  next();
};
