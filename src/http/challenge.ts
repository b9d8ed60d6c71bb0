/**
 * The Bearer challenge of a 401 (and of a 403 for a missing scope) names where this server's
 * protected resource metadata is (RFC 9728 §5.1), when OAuth sign-in is on: a client that holds
 * no key, or whose key stopped working, finds from it how to sign in.
 */
export function withResourceMetadata(
  headers: Record<string, string>,
  resourceMetadata: string | undefined,
): Record<string, string> {
  const challenge = headers['WWW-Authenticate'];
  if (!resourceMetadata || !challenge?.startsWith('Bearer')) return headers;
  const param = `resource_metadata="${resourceMetadata}"`;
  return { ...headers, 'WWW-Authenticate': challenge === 'Bearer' ? `Bearer ${param}` : `${challenge}, ${param}` };
}
