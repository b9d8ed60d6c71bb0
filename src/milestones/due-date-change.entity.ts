import { defineEntity, p } from '@mikro-orm/postgresql';
import { madeAt, uuidv7Key } from '../db/columns.js';
import { Milestone } from './milestone.entity.js';

/**
 * One change of a milestone's due date: from, to, why, when, and which key and client made it.
 * Kept for as long as the milestone is; the key is named as it was then (a revoked or deleted
 * key's changes stay readable).
 */
const MilestoneDueDateChangeSchema = defineEntity({
  name: 'MilestoneDueDateChange',
  tableName: 'milestone_due_date_changes',
  properties: {
    id: uuidv7Key(),
    milestone: () => p.manyToOne(Milestone).deleteRule('cascade'),
    fromDate: p.date().nullable(),
    toDate: p.date().nullable(),
    reason: p.string().length(500).nullable(),
    changedAt: madeAt(),
    keyId: p.uuid().nullable(),
    keyName: p.string().length(100).nullable(),
    channel: p.enum(['rest', 'mcp'] as const).nullable(),
    client: p.string().length(200).nullable(),
  },
  indexes: [{ name: 'milestone_due_date_changes_milestone_idx', properties: ['milestone', 'id'] }],
});
export class MilestoneDueDateChange extends MilestoneDueDateChangeSchema.class {}
MilestoneDueDateChangeSchema.setClass(MilestoneDueDateChange);
