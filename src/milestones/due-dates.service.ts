/**
 * A milestone's dates: its start and due (target) days, and the due date's history. Every change
 * of the due date is kept (from, to, why, when, which key and client) and the milestone carries
 * the history in brief, both written by the change itself under the project's row lock.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { MilestoneDueDateChange as ChangeDto, MilestoneUpdate } from '../../codegen/generated/api/types.gen.js';
import type { Actor } from '../kernel/actor.js';
import { cursorList, decodeCursor, idOf, isIdCursor, type Page, pageOf } from '../kernel/cursor.js';
import { badRequest, unprocessable } from '../kernel/problem.js';
import { rowById } from '../db/reads.js';
import { columnText } from '../security-log/security-log.service.js';
import { assertCanReadProject } from '../projects/projects.service.js';
import { MilestoneDueDateChange } from './due-date-change.entity.js';
import type { Milestone } from './milestone.entity.js';
import { dueDateChangesPage, milestoneOf } from './milestones.queries.js';
import { presentDueDateChange } from './milestones.presenter.js';

/** How a change came: through the REST API or the MCP server, and the client (User-Agent, or the MCP client's name). */
export type Via = { channel: 'rest' | 'mcp'; client?: string | null };

/** How many earlier due dates a milestone names itself (the rest are in its history). */
const EARLIER_KEPT = 10;

/**
 * Days the calendar has: a date's format lets year 0000 through, which PostgreSQL has no day of
 * (it refused one with a 500). Refused as any malformed date is, for REST and MCP alike.
 */
function assertStorable(dates: { startDate?: string | null; dueDate?: string | null }): void {
  const bad = (['startDate', 'dueDate'] as const).filter((field) => dates[field]?.startsWith('0000'));
  if (bad.length)
    throw badRequest(
      `${bad.join(' and ')} must be a day from year 0001 on.`,
      bad.map((field) => ({ path: `/body/${field}`, message: 'must be a date as YYYY-MM-DD, such as 2026-12-31' })),
    );
}

/** A start day after the due day is refused, whichever of the two the write sets. */
export function assertDatesInOrder(startDate: string | null | undefined, dueDate: string | null | undefined): void {
  assertStorable({ startDate, dueDate });
  if (startDate && dueDate && startDate > dueDate)
    throw unprocessable(
      `startDate (${startDate}) is after dueDate (${dueDate}): a milestone cannot start after it is due. Move one of them.`,
    ).because('start-after-due');
}

/** An update's dates: the start not after the due day, and a reason only with a due date that moves. */
export function assertDueDateChange(input: MilestoneUpdate, dueDateMoves: boolean, current: Milestone): void {
  if (input.dueDateReason !== undefined && !dueDateMoves)
    throw unprocessable(
      input.dueDate === undefined
        ? 'dueDateReason is kept with a change of the due date: send the new dueDate with it, or leave the reason out.'
        : `dueDateReason was sent, but dueDate ${input.dueDate ?? 'null'} is the milestone's due date already: nothing moved.`,
    ).because('reason-without-date-change');
  assertDatesInOrder(
    input.startDate !== undefined ? input.startDate : current.startDate,
    input.dueDate !== undefined ? input.dueDate : current.dueDate,
  );
}

/**
 * Moves the due date of `milestone` (not flushed) to `to`, keeping the change. Setting a first
 * date is not a move; every later change is, clearing the date included.
 */
export function moveDueDate(
  tem: EntityManager,
  milestone: Milestone,
  change: { to: string | null; reason?: string; actor: Actor; via?: Via },
): void {
  const from = milestone.dueDate ?? null;
  const { to, reason, actor, via } = change;
  if (milestone.originalDueDate == null) {
    milestone.originalDueDate = to;
  } else {
    milestone.dueDateMoves += 1;
    if (from) milestone.earlierDueDates = [...milestone.earlierDueDates, from].slice(-EARLIER_KEPT);
    milestone.dueDateMovedAt = new Date();
    milestone.dueDateReason = reason ?? null;
  }
  milestone.dueDate = to;
  tem.create(MilestoneDueDateChange, {
    milestone,
    fromDate: from,
    toDate: to,
    reason: reason ?? null,
    keyId: actor.keyId ?? null,
    keyName: columnText(actor.keyName, 100),
    channel: via?.channel ?? null,
    client: columnText(via?.client, 200),
  });
}

/** A milestone's due-date changes, newest first; which key and client made each is for the owner's eyes. */
export async function listDueDateChanges(
  em: EntityManager,
  actor: Actor,
  projectId: string,
  milestoneId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<ChangeDto>> {
  const { role } = await assertCanReadProject(em, actor, projectId);
  await rowById(
    milestoneId,
    () => milestoneOf(em, { projectId, milestoneId }),
    `Project ${projectId} has no milestone with id ${milestoneId}.`,
  );
  const list = cursorList('due-date-changes', milestoneId);
  const after = decodeCursor(query.cursor, isIdCursor, list);
  const rows = await dueDateChangesPage(em, { milestoneId, afterId: after?.id, limit: query.limit + 1 });
  return pageOf(rows, query.limit, (row) => presentDueDateChange(row, role === 'owner'), idOf, list);
}
