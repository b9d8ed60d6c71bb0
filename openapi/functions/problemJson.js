// Every error response of an operation is application/problem+json and nothing else.
export default (op) => {
  const results = [];
  // The MCP endpoint speaks JSON-RPC: its errors are JSON-RPC error objects by that protocol.
  if (op?.['x-mcp'] === true) return results;
  for (const [status, response] of Object.entries(op?.responses ?? {})) {
    if (!/^[45]/.test(status)) continue;
    const types = Object.keys(response?.content ?? {});
    if (types.length !== 1 || types[0] !== 'application/problem+json') {
      results.push({
        message: `response ${status} must be application/problem+json only (has ${types.join(', ') || 'no content'})`,
        path: ['responses', status],
      });
      continue;
    }
    const schema = response.content['application/problem+json'].schema;
    const required = schema?.required ?? [];
    if (!['type', 'title', 'status', 'detail'].every((k) => required.includes(k))) {
      results.push({
        message: `response ${status} must use the Problem schema (type, title, status, detail)`,
        path: ['responses', status],
      });
    }
  }
  if (op?.['x-public'] !== true && !op?.responses?.['429']) {
    results.push({ message: 'the operation does not document 429 (rate limit)', path: ['responses'] });
  }
  if (!Object.keys(op?.responses ?? {}).some((s) => /^[45]/.test(s))) {
    results.push({ message: 'the operation documents no error response', path: ['responses'] });
  }
  return results;
};
