import type { SomeHandlers } from '../http/handler.js';
import { search } from './search.service.js';

export const searchHandlers = {
  search: async ({ em, actor, query }) => ({
    status: 200,
    body: await search(em, actor, { q: query.q, type: query.type, limit: query.limit ?? 20, cursor: query.cursor }),
  }),
} satisfies SomeHandlers<'search'>;
