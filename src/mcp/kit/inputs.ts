/** Argument schemas shared by the tools, taken from the generated zod of the contract where it has them. */
import * as z from 'zod';
import { zId, zTag, zTimestamp } from '../../../codegen/generated/api/zod.gen.js';
import { PAGE_SIZE } from '../../kernel/contract.js';

// The shapes the output schemas share are written once under definitions with these names, not
// zod's invented `__schema0`.
z.globalRegistry.add(zId, { id: 'Id' });
z.globalRegistry.add(zTimestamp, { id: 'Timestamp' });
z.globalRegistry.add(zTag, { id: 'Tag' });

/** A list's `limit` and `cursor`, bounded as the REST operations bound them. */
export const pageInput = {
  limit: z
    .int()
    .min(1)
    .max(PAGE_SIZE.max)
    .optional()
    .describe(`How many items to return (1-${PAGE_SIZE.max}, default ${PAGE_SIZE.default}).`),
  cursor: z.string().min(1).max(200).optional().describe('The nextCursor of the previous page, for the next one.'),
};
export const projectIdInput = {
  projectId: zId.describe('The project id: list_my_projects gives the ids of your projects.'),
};
export const milestoneIdInput = { milestoneId: zId.describe('The milestone id (from get_roadmap).') };

const DETAILS = ['summary', 'standard', 'full'] as const;
export type Detail = (typeof DETAILS)[number];
/** A list's `detail`, saying which fields its summary keeps (they differ by list). */
export const detailInput = (summary: readonly string[]) => ({
  detail: z
    .enum(DETAILS)
    .optional()
    .describe(
      `summary: ${summary.join(', ')}; standard (default): every field with a value, long text shortened; ` +
        'full: whole text. Answers stay under 64 KB (fewer items, and a cursor for the rest).',
    ),
});

/** What to send instead, for an argument refused as malformed: said after the refusal. */
export const ARGUMENT_HINTS: Readonly<Record<string, string>> = {
  projectId:
    "projectId is the project's id, a UUID such as 0190f3c4-5b6a-7c8d-9e0f-1a2b3c4d5e6f, not its name or slug: list_my_projects gives the ids.",
  milestoneId: 'milestoneId is a UUID from get_roadmap.',
  milestoneIds: 'milestoneIds are UUIDs from get_roadmap.',
  postIds: 'postIds are UUIDs from list_build_logs.',
  since:
    'since takes a day, YYYY-MM-DD (e.g. 2026-11-01), or an ISO 8601 date-time with its offset (e.g. 2026-11-01T09:30:00Z).',
  dueDate: 'dueDate is a day, YYYY-MM-DD (e.g. 2026-12-31).',
  cursor: 'cursor is the nextCursor of the previous answer, sent back as it is.',
};
