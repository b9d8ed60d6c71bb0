import type { SomeHandlers } from '../http/kit/handler.js';
import { pageSize, type OpenApiDocument } from '../kernel/contract.js';
import type { RateLimits } from '../kernel/limits.js';
import type { MediaLimits } from '../media/media.service.js';
import type { Stats, TermCountList } from '../../codegen/generated/api/types.gen.js';
import { limits, popularSkills, popularTags, scopeList, stats, versions } from './platform.service.js';
import { CountsCache } from './counts-cache.js';

type Ops = 'listScopes' | 'getLimits' | 'getVersions' | 'listPopularTags' | 'listPopularSkills' | 'getStats';

/** `countsCacheSeconds`: how long the stats and the popular tags and skills are shared (counts-cache.ts). */
export function platformHandlers(
  doc: OpenApiDocument,
  media: MediaLimits,
  rateLimit: RateLimits,
  countsCacheSeconds: number,
  /** The longest a key may last (KEY_MAX_DAYS), as GET /platform/limits reports it. */
  keyMaxDays?: number,
) {
  const scopes = scopeList(doc);
  const page = pageSize(doc);
  // The tags and skills are counted once for the largest page a caller may ask for; each answer is a slice of it.
  const [tags, skills] = [
    new CountsCache<TermCountList>(countsCacheSeconds * 1000),
    new CountsCache<TermCountList>(countsCacheSeconds * 1000),
  ];
  const counts = new CountsCache<Stats>(countsCacheSeconds * 1000);
  const top = (list: TermCountList, limit = page.default): TermCountList => ({
    items: list.items.slice(0, limit),
    countedAt: list.countedAt,
  });
  return {
    listScopes: async () => ({ status: 200, body: scopes }),
    getLimits: async () => ({ status: 200, body: limits(doc, media, rateLimit, keyMaxDays) }),
    getVersions: async () => ({ status: 200, body: versions(doc) }),
    listPopularTags: async ({ em, query }) => ({
      status: 200,
      body: top(await tags.get(() => popularTags(em, page.max)), query?.limit),
    }),
    listPopularSkills: async ({ em, query }) => ({
      status: 200,
      body: top(await skills.get(() => popularSkills(em, page.max)), query?.limit),
    }),
    getStats: async ({ em }) => ({ status: 200, body: await counts.get(() => stats(em)) }),
  } satisfies SomeHandlers<Ops>;
}
