/**
 * Opportunity radar: open jobs and projects looking for collaborators, ranked for the caller
 * from their skills and the languages of their synced GitHub repositories. Only opportunities
 * that match at least one signal are listed; the caller's own jobs and projects (and projects
 * they already belong to), closed or expired jobs and private projects never are.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RadarItem, RadarPage } from '../../codegen/generated/api/types.gen.js';
import type { Actor } from '../http/actor.js';
import { languageShares } from '../github/github.service.js';
import { actorId } from '../projects/projects.service.js';
import { preparedRows } from '../db/hot-read.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { ageSignal, scoreOpportunity, type Signals } from './radar.score.js';

/** How many of the newest candidates of each kind are scored. */
const CANDIDATES = 500;

/**
 * The caller's signals: their skills and the languages of their synced repositories, in one
 * round trip (the repositories' language bytes as one row each, forks left out by languageShares).
 */
async function signalsFor(em: EntityManager, userId: string | null): Promise<Signals> {
  const rows = await preparedRows<{ skills: string[]; fork: boolean | null; languages: Record<string, number> | null }>(
    em,
    `select u.skills, r.fork, r.languages from users u
     left join github_accounts a on a.user_id = u.id left join github_repos r on r.account_id = a.id
     where u.id = ?`,
    [userId],
  );
  const repos = rows.flatMap((r) => (r.languages === null ? [] : [{ fork: r.fork ?? false, languages: r.languages }]));
  return {
    skills: new Set((rows[0]?.skills ?? []).map((s) => s.toLowerCase())),
    languages: new Map(languageShares(repos).map((l) => [l.language.toLowerCase(), l.share] as const)),
  };
}

type Scored = RadarItem & { createdAt: Date };

/**
 * The candidates are read as rows of the columns the score and the item use, not entities: up
 * to CANDIDATES of each kind on every request (hydrating them cost ~23 ms of CPU a kind).
 * Creation times come as whole milliseconds since the epoch, what a Date holds.
 */
const CREATED_MS = 'floor(extract(epoch from created_at) * 1000)::float8 as created_ms';

async function jobItems(
  em: EntityManager,
  actor: Actor,
  signals: Signals,
  terms: string[],
  now: Date,
): Promise<Scored[]> {
  const jobs = await preparedRows<{
    id: string;
    title: string;
    company: string;
    skills: string[];
    remote_policy: string;
    salary_min: number | null;
    created_ms: number;
  }>(
    em,
    `select id, title, company, skills, remote_policy, salary_min, ${CREATED_MS} from jobs
     where status = 'open' and expires_at > ?::timestamptz and poster_id <> ? and skills && ?::text[]
     order by id desc limit ${CANDIDATES}`,
    [now.toISOString(), actorId(actor), terms],
  );
  return jobs.map((j) => {
    const createdAt = new Date(j.created_ms);
    const m = scoreOpportunity(signals, { wanted: j.skills, createdAt }, now);
    const signalsText = [ageSignal(m.ageDays), j.remote_policy, ...(j.salary_min !== null ? ['salary stated'] : [])];
    return {
      type: 'job' as const,
      id: j.id,
      title: j.title,
      subtitle: j.company,
      score: m.score,
      reasons: { matchedSkills: m.matchedSkills, matchedLanguages: m.matchedLanguages, signals: signalsText },
      path: `/api/v1/jobs/${j.id}`,
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
  const me = actorId(actor);
  const projects = await preparedRows<{
    id: string;
    name: string;
    tagline: string;
    stage: string;
    wanted_skills: string[];
    created_ms: number;
  }>(
    em,
    `select id, name, tagline, stage, wanted_skills, ${CREATED_MS} from projects
     where visibility = 'public' and looking_for_collaborators and owner_id <> ? and wanted_skills && ?::text[]
       and id not in (select project_id from project_members where user_id = ?)
     order by id desc limit ${CANDIDATES}`,
    [me, terms, me],
  );
  return projects.map((p) => {
    const createdAt = new Date(p.created_ms);
    const m = scoreOpportunity(signals, { wanted: p.wanted_skills, createdAt }, now);
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
      path: `/api/v1/projects/${p.id}`,
      createdAt,
    };
  });
}

const isOffset = (v: unknown): v is { o: number } =>
  typeof v === 'object' && v !== null && Number.isInteger((v as { o?: unknown }).o) && (v as { o: number }).o > 0;

export async function radar(
  em: EntityManager,
  actor: Actor,
  kinds: ('job' | 'project')[],
  query: { limit: number; cursor?: string },
  now = new Date(),
): Promise<RadarPage> {
  const offset = decodeCursor(query.cursor, isOffset)?.o ?? 0;
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
    nextCursor: offset + query.limit < items.length ? encodeCursor({ o: offset + query.limit }) : null,
  };
}
