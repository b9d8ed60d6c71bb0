/**
 * Linking a GitHub login, and proving it. A link is a claim: anyone can type `torvalds`. Nothing
 * is fetched, shown on the profile, or fed to GitHub Insight and the radar until the claim is
 * proven: the user puts a one-off code in their GitHub bio, and we read it back through GitHub's
 * public API (docs/decisions/0009-github-proof.md says why this proof and not OAuth).
 */
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { GithubAccount, GithubRepo } from './github.entity.js';
import { User } from '../users/user.entity.js';
import { badRequest, notFound } from '../kernel/problem.js';
import { GITHUB_LOGIN, type GithubClient, GithubNotFound, GithubRateLimited } from './github.client.js';

const newChallenge = () => `shipyard-verify-${randomBytes(8).toString('hex')}`;

/**
 * Links `login` to the user, unverified, with a fresh code to prove it. Linking the login that is
 * already linked keeps it as it is (verified or not); linking another one drops the old login's data.
 */
export async function linkGithub(em: EntityManager, userId: string, login: string): Promise<GithubAccount> {
  if (!GITHUB_LOGIN.test(login)) throw badRequest(`'${login}' is not a GitHub login.`);
  const user = await em.findOne(User, { id: userId });
  if (!user) throw notFound('No such user.');
  let account = await em.findOne(GithubAccount, { user: userId });
  if (account && account.login.toLowerCase() === login.toLowerCase()) return account;
  if (account) {
    await em.nativeDelete(GithubRepo, { account: account.id }); // another account: its data goes
    em.remove(account);
    await em.flush();
  }
  account = em.create(GithubAccount, { user, login, challenge: newChallenge(), verifiedAt: null });
  user.githubLogin = null; // shown on the profile only once proven
  await em.flush();
  return account;
}

export type Verification = { verified: true; account: GithubAccount } | { verified: false; reason: string };

/**
 * Reads the linked login's bio from GitHub: if it holds the account's code, the login is proven
 * and becomes the profile's. A login proven by another Shipyard user before stops being theirs,
 * since whoever controls the bio now has shown that they control the GitHub account.
 */
export async function verifyGithub(em: EntityManager, client: GithubClient, userId: string): Promise<Verification> {
  const account = await em.findOne(GithubAccount, { user: userId }, { populate: ['user'] });
  if (!account) return { verified: false, reason: 'Link a GitHub login first.' };
  if (account.verifiedAt) return { verified: true, account };
  // Every unproven account has its code: linkGithub gives one, losing a proof gives a new one, and
  // the migration gave the links older than the proof theirs.
  const code = account.challenge!;
  let bio: string;
  try {
    bio = (await client.user(account.login)).bio ?? '';
  } catch (err) {
    return { verified: false, reason: unreachable(err, account.login) };
  }
  if (!bio.includes(code)) {
    return {
      verified: false,
      reason: `The GitHub bio of ${account.login} does not contain ${code} yet. Add it on github.com/settings/profile and try again; GitHub can take a minute to show a new bio.`,
    };
  }
  await em.transactional(async (tem) => {
    const others = await tem.find(GithubAccount, {
      login: { $ilike: account.login },
      verifiedAt: { $ne: null },
      id: { $ne: account.id },
    });
    for (const other of others) {
      other.verifiedAt = null;
      other.challenge = newChallenge();
      await tem.nativeUpdate(User, { id: other.user.id }, { githubLogin: null });
    }
    const mine = await tem.findOneOrFail(GithubAccount, { id: account.id }, { populate: ['user'] });
    mine.verifiedAt = new Date();
    mine.challenge = null;
    mine.user.githubLogin = mine.login;
  });
  em.clear();
  return { verified: true, account: await em.findOneOrFail(GithubAccount, { id: account.id }) };
}

function unreachable(err: unknown, login: string): string {
  if (err instanceof GithubNotFound) return `GitHub has no user '${login}'. Check the login and link it again.`;
  if (err instanceof GithubRateLimited)
    return `GitHub's rate limit is used up until ${err.resetAt.toISOString()}; try again after that.`;
  return 'GitHub could not be reached; try again in a moment.';
}
