import type { SearchPage } from '../../codegen/generated/api/types.gen.js';
import type { SomeHandlers } from '../http/kit/handler.js';
import type { SearchCache } from './search-cache.js';
import { search } from './search.service.js';
import { pageLimit } from '../kernel/contract.js';

export function searchHandlers(cache: SearchCache<SearchPage>) {
  return {
    search: async ({ em, actor, query }) => ({
      status: 200,
      body: await search(
        em,
        actor,
        { q: query.q, type: query.type, limit: pageLimit(query.limit), cursor: query.cursor },
        cache,
      ),
    }),
  } satisfies SomeHandlers<'search'>;
}
