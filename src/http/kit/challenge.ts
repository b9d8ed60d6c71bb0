/**
 * The Bearer challenge of a 401 (and of a 403 for a missing scope) names where this server's
 * protected resource metadata is (RFC 9728 §5.1), when OAuth sign-in is on: a client that holds
 * no key, or whose key stopped working, finds from it how to sign in; with `scopes`, which scopes
 * to ask for (RFC 6750 §3).
 */
export function withResourceMetadata(
  headers: Record<string, string>,
  resourceMetadata: string | undefined,
  scopes?: readonly string[],
): Record<string, string> {
  const challenge = headers['WWW-Authenticate'];
  if (!resourceMetadata || !challenge?.startsWith('Bearer')) return headers;
  const params = [
    ...(scopes && !challenge.includes('scope=') ? [`scope="${scopes.join(' ')}"`] : []),
    `resource_metadata="${resourceMetadata}"`,
  ].join(', ');
  return { ...headers, 'WWW-Authenticate': challenge === 'Bearer' ? `Bearer ${params}` : `${challenge}, ${params}` };
}
