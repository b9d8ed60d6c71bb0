/**
 * Opportunity radar: open jobs and projects looking for collaborators, ranked for the caller
 * from their skills and the languages of their synced GitHub repositories. Only opportunities
 * that match at least one signal are listed; the caller's own jobs and projects (and projects
 * they already belong to), closed or expired jobs and private projects never are.
 */
import { API_BASE } from '../kernel/contract.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RadarItem, RadarPage } from '../../codegen/generated/api/types.gen.js';
import { type Actor, actorId } from '../kernel/actor.js';
import { languageShares } from '../github/github.service.js';
import { jobCandidates, projectCandidates, signalRows } from './radar.queries.js';
import { cursorList, decodeCursor, encodeCursor, isOffsetUpTo } from '../kernel/cursor.js';
import { ageSignal, scoreOpportunity, type Signals } from './radar.score.js';

/** The caller's signals: their skills and the languages of their synced repositories (forks left out by languageShares). */
async function signalsFor(em: EntityManager, userId: string | null): Promise<Signals> {
  const rows = await signalRows(em, { userId });
  const repos = rows.flatMap((r) => (r.languages === null ? [] : [{ fork: r.fork ?? false, languages: r.languages }]));
  return {
    skills: new Set((rows[0]?.skills ?? []).map((s) => s.toLowerCase())),
    languages: new Map(languageShares(repos).map((l) => [l.language.toLowerCase(), l.share] as const)),
  };
}

type Scored = RadarItem & { createdAt: Date };

async function jobItems(
  em: EntityManager,
  actor: Actor,
  signals: Signals,
  terms: string[],
  now: Date,
): Promise<Scored[]> {
  const jobs = await jobCandidates(em, { now, userId: actorId(actor), terms });
  return jobs.map((j) => {
    const createdAt = new Date(j.createdAt);
    const m = scoreOpportunity(signals, { wanted: j.skills, createdAt }, now);
    const signalsText = [ageSignal(m.ageDays), j.remotePolicy, ...(j.salaryMin !== null ? ['salary stated'] : [])];
    return {
      type: 'job' as const,
      id: j.id,
      title: j.title,
      subtitle: j.company,
      score: m.score,
      reasons: { matchedSkills: m.matchedSkills, matchedLanguages: m.matchedLanguages, signals: signalsText },
      path: `${API_BASE}/jobs/${j.id}`,
      createdAt,
    };
  });
}

async function projectItems(
  em: EntityManager,
  actor: Actor,
  signals: Signals,
  terms: string[],
  now: Date,
): Promise<Scored[]> {
  const projects = await projectCandidates(em, { userId: actorId(actor), terms });
  return projects.map((p) => {
    const createdAt = new Date(p.createdAt);
    const m = scoreOpportunity(signals, { wanted: p.wantedSkills, createdAt }, now);
    return {
      type: 'project' as const,
      id: p.id,
      title: p.name,
      subtitle: p.tagline,
      score: m.score,
      reasons: {
        matchedSkills: m.matchedSkills,
        matchedLanguages: m.matchedLanguages,
        signals: [ageSignal(m.ageDays), `stage: ${p.stage}`],
      },
      path: `${API_BASE}/projects/${p.id}`,
      createdAt,
    };
  });
}

/** Past this, a cursor was not one this list gave (a list this long is not paged through). */
const isOffset = isOffsetUpTo(100_000);

export async function radar(
  em: EntityManager,
  actor: Actor,
  kinds: ('job' | 'project')[],
  query: { limit: number; cursor?: string },
  now = new Date(),
): Promise<RadarPage> {
  const list = cursorList('radar', [...kinds].sort(), actor.userId);
  const offset = decodeCursor(query.cursor, isOffset, list)?.o ?? 0;
  const signals = await signalsFor(em, actorId(actor));
  const terms = [...new Set([...signals.skills, ...signals.languages.keys()])];
  if (terms.length === 0) return { items: [], nextCursor: null };
  const items = [
    ...(kinds.includes('job') ? await jobItems(em, actor, signals, terms, now) : []),
    ...(kinds.includes('project') ? await projectItems(em, actor, signals, terms, now) : []),
  ];
  // Best first; ties by newest, then by id, so the order is the same for the same data.
  items.sort((a, b) => b.score - a.score || b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id));
  const page = items.slice(offset, offset + query.limit);
  return {
    items: page.map(({ createdAt: _createdAt, ...item }) => item),
    nextCursor: offset + query.limit < items.length ? encodeCursor({ o: offset + query.limit }, list) : null,
  };
}
