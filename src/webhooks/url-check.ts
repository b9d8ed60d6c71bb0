/**
 * Where a webhook may be sent. Checked when a subscription is saved (a clear 422) and again
 * before every delivery, with the address the connection then goes to: a name that resolved to
 * a public address when it was saved may point inside later.
 */
import { type AddressPolicy, allowedAddress, type Resolve, type ResolvedAddress } from '../kernel/public-address.js';

export type UrlPolicy = {
  /** Development and tests (WEBHOOK_ALLOW_LOCAL_URLS): http, this machine and private networks too. */
  allowLocal: boolean;
  /** How names are resolved (the system's resolver by default). */
  resolve?: Resolve;
};

/** How a developer receives on their own machine: said where a local or http URL is refused. */
export const LOCAL_HINT =
  'To receive on your own machine while developing, start the server with WEBHOOK_ALLOW_LOCAL_URLS=true (docs/webhooks.md)';

/** Why `raw` may not receive webhooks, or undefined when its form is fine (its host is checked by `deliveryAddress`). */
export function urlFormProblem(raw: string, policy: UrlPolicy): string | undefined {
  if (!URL.canParse(raw)) return 'is not a URL';
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(policy.allowLocal && url.protocol === 'http:'))
    return policy.allowLocal
      ? 'must be an http or https URL'
      : url.protocol === 'http:'
        ? `must be an https URL. ${LOCAL_HINT}`
        : 'must be an https URL';
  if (url.username || url.password)
    return 'must not carry credentials (user:password@); put a secret in the path if you need one';
  if (url.hash) return 'must not have a fragment (#…)';
  return undefined;
}

/** The address a delivery to `url` connects to, or an Error saying why it may not. */
export function deliveryAddress(url: URL, policy: UrlPolicy): Promise<ResolvedAddress> {
  const addresses: AddressPolicy = policy.allowLocal ? 'any' : 'public';
  return allowedAddress(url.hostname, addresses, policy.resolve).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' || err.code === 'ENODATA')
      throw new Error(`its host ${url.hostname} does not resolve`);
    throw err;
  });
}
