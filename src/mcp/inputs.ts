/** Argument schemas shared by the tools, taken from the generated zod of the contract. */
import * as z from 'zod';
import { zId } from '../../codegen/generated/api/zod.gen.js';

export const pageInput = {
  limit: z.int().min(1).max(100).optional().describe('How many items to return (1-100, default 20).'),
  cursor: z.string().min(1).max(200).optional().describe('The nextCursor of the previous page.'),
};
export const projectIdInput = { projectId: zId.describe('The project id (from list_my_projects).') };
export const milestoneIdInput = { milestoneId: zId.describe('The milestone id (from get_roadmap).') };
