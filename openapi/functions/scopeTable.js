// Holds every operation's scope tag to the x-scopes table at the root of the document.
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** `GET /api/v1/posts/**` matches /api/v1/posts and every path below it. */
export function routeMatches(rule, method, fullPath) {
  const [ruleMethod, rulePath] = rule.split(' ');
  if (ruleMethod.toLowerCase() !== method) return false;
  if (rulePath.endsWith('/**')) {
    const base = rulePath.slice(0, -3);
    return fullPath === base || fullPath.startsWith(`${base}/`);
  }
  return fullPath === rulePath;
}

export function expectedScopes(scopes, method, fullPath) {
  return scopes.filter((s) => (s.opens ?? []).some((rule) => routeMatches(rule, method, fullPath))).map((s) => s.id);
}

export default (doc) => {
  const results = [];
  const scopes = doc?.['x-scopes'];
  if (!Array.isArray(scopes) || scopes.length === 0) {
    return [{ message: 'the document has no x-scopes table', path: ['x-scopes'] }];
  }
  const known = new Set(scopes.map((s) => s.id));
  // The first server's URL with its variables at their defaults (as src/http/contract.ts reads it).
  const server = doc.servers?.[0];
  const url = (server?.url ?? '/').replace(/\{(\w+)\}/g, (_, name) => server?.variables?.[name]?.default ?? '');
  const base = new URL(url, 'http://x').pathname.replace(/\/$/, '');
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item?.[method];
      if (!op) continue;
      const where = ['paths', path, method];
      const fullPath = base + path;
      const tag = op['x-required-scope'];
      const expected = expectedScopes(scopes, method, fullPath);
      const marked = op['x-session-only'] === true || op['x-public'] === true || op['x-mcp'] === true;
      if (marked && tag !== undefined) {
        results.push({
          message: `${method.toUpperCase()} ${path} is marked session-only/public/mcp and also has x-required-scope`,
          path: where,
        });
      } else if (marked && expected.length > 0) {
        results.push({
          message: `${method.toUpperCase()} ${path} is marked session-only/public/mcp but the scope table opens it with ${expected.join(', ')}`,
          path: where,
        });
      } else if (!marked && tag === undefined) {
        results.push({
          message: `${method.toUpperCase()} ${path} has no x-required-scope (nor x-session-only / x-public / x-mcp)`,
          path: where,
        });
      } else if (!marked && !known.has(tag)) {
        results.push({
          message: `${method.toUpperCase()} ${path}: unknown scope '${tag}'`,
          path: [...where, 'x-required-scope'],
        });
      } else if (!marked && expected.length !== 1) {
        results.push({
          message: `${method.toUpperCase()} ${path}: the scope table opens it with [${expected.join(', ')}], it must name exactly one scope`,
          path: where,
        });
      } else if (!marked && expected[0] !== tag) {
        results.push({
          message: `${method.toUpperCase()} ${path}: x-required-scope '${tag}' disagrees with the scope table ('${expected[0]}')`,
          path: [...where, 'x-required-scope'],
        });
      }
    }
  }
  return results;
};
