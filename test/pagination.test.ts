/**
 * Generated from the contract: every list operation (a GET that takes `limit` and `cursor`) walked one item a
 * page to its end, following `nextCursor`, gives the same items in the same order as one page as
 * large as the contract allows. A page of one must never be cut to nothing while more remain (the
 * members list once answered 500 there: its owner filled the page).
 */
import { describe, expect, it } from 'vitest';
import { raw, useServer } from './harness.js';
import { operationRequest } from './operation-request.js';
import { loadContract, listOperations, PAGE_SIZE, type Operation } from '../src/kernel/contract.js';

const contract = loadContract();
type Parameter = { name: string; in: string };
const takesLimit = (op: Operation) => {
  const item = contract.paths[op.path]![op.method] as { parameters?: Parameter[] };
  const shared = (contract.paths[op.path] as { parameters?: Parameter[] }).parameters ?? [];
  const params = [...shared, ...(item.parameters ?? [])].map((p) =>
    '$ref' in p ? ((contract.components as any)?.parameters?.[String(p.$ref).split('/').at(-1)!] as Parameter) : p,
  );
  const query = (name: string) => params.some((p) => p?.in === 'query' && p.name === name);
  // A list that pages: `limit` and `cursor` (a top-N ranking takes `limit` only).
  return query('limit') && query('cursor');
};
const lists = listOperations(contract).filter(
  (op) => op.method === 'get' && op.access.kind === 'scope' && takesLimit(op),
);

/** A walk longer than this is a list shared with the rest of the suite: its start is compared. */
const MAX_PAGES = 40;

const { t } = useServer();

const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;
const idOf = (item: any) => String(item?.id ?? item?.user?.username ?? JSON.stringify(item));

describe('every list walked one item a page (from the spec)', () => {
  it('finds the list operations', () => {
    expect(lists.map((op) => op.operationId)).toEqual(
      expect.arrayContaining(['listProjectMembers', 'listMilestones', 'listBuildLogs', 'listComments']),
    );
  });

  for (const op of lists) {
    it(`${op.operationId} (${op.path}) pages by one to the same items as one page`, async () => {
      const { owner, path } = await operationRequest(t, contract, op);
      const whole = await raw(t, 'GET', withQuery(path, `limit=${PAGE_SIZE.max}`), { token: owner.token });
      expect(whole.status, JSON.stringify(whole.json)).toBe(200);
      const walked: unknown[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `limit=1&cursor=${encodeURIComponent(cursor)}` : 'limit=1';
        const page = await raw(t, 'GET', withQuery(path, query), { token: owner.token });
        expect(page.status, `page ${pages + 1}: ${JSON.stringify(page.json)}`).toBe(200);
        expect(page.json.items.length, `page ${pages + 1}`).toBeLessThanOrEqual(1);
        // A page may be empty only when it is the last.
        if (page.json.nextCursor) expect(page.json.items.length, `page ${pages + 1}`).toBe(1);
        walked.push(...page.json.items);
        cursor = page.json.nextCursor;
        pages++;
      } while (cursor && pages < MAX_PAGES);
      const expected = whole.json.items.slice(0, walked.length).map(idOf);
      expect(walked.map(idOf)).toEqual(expected);
      if (!cursor) expect(walked.length).toBe(whole.json.items.length);
    });
  }
});
