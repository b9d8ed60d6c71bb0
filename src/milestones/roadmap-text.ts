/**
 * The roadmap in words, as the MCP answers say it to an agent: a milestone's due date, and the
 * roadmap's status lines that open get_roadmap. Days are UTC calendar days (src/kernel/days.ts).
 */
import type { Milestone } from '../../codegen/generated/api/types.gen.js';
import { daysAgo, daysBetween, utcDay } from '../kernel/days.js';
import { STALE_AFTER_DAYS } from '../projects/pulse.js';
import type { RoadmapStatus, StatusMilestone } from './roadmap-status.js';

const days = (n: number) => `${n} day${Math.abs(n) === 1 ? '' : 's'}`;
const times = (n: number) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);
const signed = (n: number) => `${n > 0 ? '+' : ''}${days(n)}`;
const ago = (n: number) => (n === 0 ? 'today' : `${days(n)} ago`);
/** How often and how far a due date moved: "moved twice, +50 days". */
const moved = (moves: number, slipDays: number | null) =>
  `moved ${times(moves)}${slipDays ? `, ${signed(slipDays)}` : ''}`;

/** The due date as a person says it: due when or overdue since, and how often and how far it moved. */
export function dueText(m: Milestone): string {
  if (!m.dueDate) return '';
  const history = m.dueDateHistory ? ` (${moved(m.dueDateHistory.moves, m.dueDateHistory.slipDays)})` : '';
  return `, ${m.overdue ? 'OVERDUE since' : 'due'} ${m.dueDate}${history}`;
}

/**
 * The roadmap's status in a few lines, first in get_roadmap's answer: what an agent repeats to its
 * person. A milestone is named by its title only for the roadmap's owner (whose words they are);
 * for anyone else by its position, its title being in its own (fenced) line below.
 */
export function statusLines(s: RoadmapStatus, today = utcDay()): string {
  const name = (m: StatusMilestone) =>
    s.access.role === 'owner' ? `${m.position}. ${m.title}` : `milestone ${m.position}`;
  const count = (n: number) => (n > s.countCap ? `more than ${s.countCap}` : String(n));
  const lines = [pulseLine(s.pulse)];
  if (s.overdueCount) {
    const each = s.overdue.map((m) => `${name(m)} (due ${m.dueDate}, ${days(daysBetween(m.dueDate, today))} late)`);
    lines.push(
      `Overdue: ${count(s.overdueCount)}: ${each.join('; ')}${s.overdueCount > s.overdue.length ? '; …' : ''}.`,
    );
  }
  const next = s.nextDue;
  lines.push(
    next
      ? `Next due: ${name(next)} on ${next.dueDate} (${next.dueDate === today ? 'today' : `in ${days(daysBetween(today, next.dueDate))}`}).`
      : 'Next due: no open milestone has a date ahead.',
  );
  if (s.slippedCount) {
    const one = s.slippedCount === 1;
    const each = s.slipped.map((m) => `${name(m)} ${moved(m.moves, m.slipDays)}`);
    lines.push(
      `Slipped: ${count(s.slippedCount)} open milestone${one ? ' moved its' : 's moved their'} due date; ${each.join('; ')}.`,
    );
  }
  return lines.join('\n');
}

/** The project's health and its age, and the last build log: "Status: at risk, reported 2 days ago; …". */
function pulseLine({ health, daysSinceLastBuildLog, stale }: RoadmapStatus['pulse']): string {
  const reported = health
    ? `${health.status.replace('_', ' ')}, reported ${ago(daysAgo(health.setAt))}`
    : 'no health reported yet';
  const last = daysSinceLastBuildLog === null ? 'no build log yet' : `last build log ${ago(daysSinceLastBuildLog)}`;
  return `Status: ${reported}; ${last}${stale ? ` (stale: none for over ${STALE_AFTER_DAYS} days)` : ''}.`;
}
