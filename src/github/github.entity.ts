import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { User } from '../users/user.entity.js';

const GITHUB_SYNC_STATUSES = ['never', 'ok', 'partial', 'rate_limited', 'not_found', 'error'] as const;
export type WeeklyCommits = { week: string; commits: number }[];

const GithubAccountSchema = defineEntity({
  name: 'GithubAccount',
  tableName: 'github_accounts',
  properties: {
    id: uuidv7Key(),
    user: () => p.oneToOne(User).owner().unique().deleteRule('cascade'),
    login: p.string().length(39),
    name: p.string().length(255).nullable(),
    avatarUrl: p.string().length(500).nullable(),
    htmlUrl: p.string().length(500).nullable(),
    publicRepos: p.integer().nullable(),
    followers: p.integer().nullable(),
    syncStatus: p.enum(GITHUB_SYNC_STATUSES).default('never'),
    syncMessage: p.text().nullable(),
    /** When data was last fetched successfully (ok or partial). */
    syncedAt: p.datetime().nullable(),
    /** When the last attempt ran, whatever its outcome. */
    attemptedAt: p.datetime().nullable(),
    /** Not before this time (GitHub's rate-limit reset). */
    retryAfter: p.datetime().nullable(),
    /**
     * The code the user puts in their GitHub bio to prove the login is theirs. Not a secret:
     * it is meant to be shown publicly on GitHub for a moment.
     */
    challenge: p.string().length(40).nullable(),
    /** When the bio showed the code; until then nothing is fetched or shown from this login. */
    verifiedAt: p.datetime().nullable(),
    /**
     * GitHub's id of the account whose bio showed the code. A login can be renamed or freed and
     * taken by someone else; the id cannot, so the proof holds only while the login has this id.
     */
    githubId: p.bigint('number').nullable(),
    createdAt: madeAt(),
  },
  indexes: [
    // One Shipyard user per proven GitHub login and per GitHub account (docs/decisions/0009-github-proof.md).
    {
      name: 'github_accounts_verified_login_key',
      expression:
        'create unique index "github_accounts_verified_login_key" on "github_accounts" (lower("login")) where "verified_at" is not null',
    },
    {
      name: 'github_accounts_verified_github_id_key',
      expression:
        'create unique index "github_accounts_verified_github_id_key" on "github_accounts" ("github_id") where "verified_at" is not null',
    },
  ],
});
export class GithubAccount extends GithubAccountSchema.class {}
GithubAccountSchema.setClass(GithubAccount);

const GithubRepoSchema = defineEntity({
  name: 'GithubRepo',
  tableName: 'github_repos',
  properties: {
    id: uuidv7Key(),
    account: () => p.manyToOne(GithubAccount).deleteRule('cascade'),
    name: p.string().length(100),
    fullName: p.string().length(200),
    description: p.text().nullable(),
    htmlUrl: p.string().length(500),
    stars: p.integer(),
    forks: p.integer(),
    language: p.string().length(100).nullable(),
    topics: p.type(TextArrayType).default([]),
    pushedAt: p.datetime().nullable(),
    fork: p.boolean(),
    archived: p.boolean(),
    /** Bytes of code by language, as GitHub reports them. */
    languages: p.json<Record<string, number>>(),
    /** Commits per week (last 52), or null while GitHub has not computed them yet. */
    weeklyCommits: p.json<WeeklyCommits>().nullable(),
  },
  indexes: [{ name: 'github_repos_account_idx', properties: ['account', 'pushedAt'] }],
});
export class GithubRepo extends GithubRepoSchema.class {}
GithubRepoSchema.setClass(GithubRepo);
