/** Argument schemas shared by the tools, taken from the generated zod of the contract where it has them. */
import * as z from 'zod';
import { zId } from '../../codegen/generated/api/zod.gen.js';

export const pageInput = {
  limit: z.int().min(1).max(100).optional().describe('How many items to return (1-100, default 20).'),
  cursor: z.string().min(1).max(200).optional().describe('The nextCursor of the previous page, for the next one.'),
};
export const projectIdInput = {
  projectId: zId.describe('The project id: list_my_projects gives the ids of your projects.'),
};
export const milestoneIdInput = { milestoneId: zId.describe('The milestone id (from get_roadmap).') };

const DETAILS = ['summary', 'standard', 'full'] as const;
export type Detail = (typeof DETAILS)[number];
export const detailInput = {
  detail: z
    .enum(DETAILS)
    .optional()
    .describe(
      'summary: ids, titles, status, positions; standard (default): every field, long text shortened; ' +
        'full: whole text. Answers stay under 64 KB (fewer items, and a cursor for the rest).',
    ),
};
