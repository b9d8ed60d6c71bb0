import type { SomeHandlers } from '../http/handler.js';
import type { OpenApiDocument } from '../http/contract.js';
import type { RateLimits } from '../http/rate-limit.js';
import { limits, popularSkills, popularTags, scopeList, stats, versions } from './platform.service.js';

type Ops = 'listScopes' | 'getLimits' | 'getVersions' | 'listPopularTags' | 'listPopularSkills' | 'getStats';

export function platformHandlers(doc: OpenApiDocument, uploadBytes: number, rateLimit: RateLimits) {
  const scopes = scopeList(doc);
  return {
    listScopes: async () => ({ status: 200, body: scopes }),
    getLimits: async () => ({ status: 200, body: limits(doc, uploadBytes, rateLimit) }),
    getVersions: async () => ({ status: 200, body: versions(doc) }),
    listPopularTags: async ({ em, query }) => ({ status: 200, body: await popularTags(em, query?.limit ?? 20) }),
    listPopularSkills: async ({ em, query }) => ({ status: 200, body: await popularSkills(em, query?.limit ?? 20) }),
    getStats: async ({ em }) => ({ status: 200, body: await stats(em) }),
  } satisfies SomeHandlers<Ops>;
}
