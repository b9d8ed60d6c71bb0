/**
 * The radar's score, pure and deterministic for the same data and clock:
 *   score = 0.85 × coverage + 0.15 × recency
 *   coverage = mean over the wanted skills of: 1 if it is one of your skills, else
 *              0.6 + 0.4 × share if you write it on GitHub (share of your code), else 0
 *   recency  = e^(−age in days / 30)
 */
export type Signals = { skills: ReadonlySet<string>; languages: ReadonlyMap<string, number> };
export type Opportunity = { wanted: readonly string[]; createdAt: Date };
export type Match = { score: number; matchedSkills: string[]; matchedLanguages: string[]; ageDays: number };

const COVERAGE_WEIGHT = 0.85;
const RECENCY_WEIGHT = 0.15;
const RECENCY_DAYS = 30;

export function scoreOpportunity(signals: Signals, opp: Opportunity, now: Date): Match {
  const wanted = [...new Set(opp.wanted.map((w) => w.toLowerCase()))];
  const matchedSkills: string[] = [];
  const matchedLanguages: string[] = [];
  let sum = 0;
  for (const w of wanted) {
    if (signals.skills.has(w)) {
      matchedSkills.push(w);
      sum += 1;
    } else if (signals.languages.has(w)) {
      matchedLanguages.push(w);
      sum += 0.6 + 0.4 * signals.languages.get(w)!;
    }
  }
  const coverage = wanted.length ? sum / wanted.length : 0;
  const ageDays = Math.max(0, (now.getTime() - opp.createdAt.getTime()) / 86_400_000);
  const recency = Math.exp(-ageDays / RECENCY_DAYS);
  const score = Math.round((COVERAGE_WEIGHT * coverage + RECENCY_WEIGHT * recency) * 10_000) / 10_000;
  return { score, matchedSkills, matchedLanguages, ageDays };
}

export function ageSignal(ageDays: number): string {
  const d = Math.floor(ageDays);
  return d === 0 ? 'posted today' : d === 1 ? 'posted yesterday' : `posted ${d} days ago`;
}
